"""What a device and dpdist's servers agree on, below both: no client imports a server's code, nor a server a client's.

A relayed campaign's **identity** and pin (:mod:`._identity`), its reports as Oblivious HTTP requests (RFC 9458,
:mod:`._ohttp_report`: the one envelope devices seal in), the binding of each report to its Privacy Pass token
(:mod:`._binding`), the frames of a relayed batch (:mod:`._frames`), dpdist's own envelope, deprecated, which the
collector still opens for devices of earlier versions (:mod:`._envelope`), and how many reports fit one request
body, with the service's default limits (:mod:`._report_bound`).  The device's client (:mod:`dpdist.client`), the
relay (:mod:`dpdist.relay`) and the collection service (:mod:`dpdist.serve`) each import what they need of it; the
Oblivious HTTP and Binary HTTP standards themselves are :mod:`dpdist._ohttp`.
"""
