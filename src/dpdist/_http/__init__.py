"""What every HTTP caller of a dpdist server shares: the device and admin clients, the relay, the Privacy Pass
fetcher, the command line and the service's own calls.

* :mod:`._deadline`: one request answered whole within a deadline and a size (:mod:`._bounded_reads`, the reads of
  its socket; :mod:`._decoded`, its body decoded within the size);
* :mod:`._answer`: an answer read as a dpdist document or a refusal of one of :data:`._codes.CODES`, shown in a line;
* :mod:`._retry`: when a failed request is sent again; :mod:`._acks`: whether an answer acknowledges a batch;
* :mod:`._redirect`: a redirect refused, never followed; :mod:`._tls`: one verifying TLS context per process.
* :mod:`._telemetry`: the servers' OpenTelemetry traces (``dpdist[otel]``), off and unimported unless asked for.
"""
