"""The sub-commands of ``dpdist``: the module that adds each, and each one's line in ``dpdist --help``.

``dpdist --help`` (and any first word that is no sub-command) is built from this table alone: the modules that add
the sub-commands import what their commands run (NumPy, the protocols, the service), more CPU than the whole listing
needs.  Each module's ``add_commands`` takes its commands' lines from :data:`HELP`.
"""

#: each module of sub-commands and its commands, in the order ``dpdist --help`` lists them, with each one's line
#: there (tests/cli/test_errors.py checks that each module adds exactly these)
COMMANDS: dict[str, dict[str, str]] = {
    "dpdist.cli._basic": {
        "list": "list the registered local protocols",
        "demo": "estimate an embedded dataset with every protocol",
    },
    "dpdist.cli._experiments": {
        "reproduce": "run a paper's experiments (or one figure, or a TOML spec): tables, figures, report.md",
        "datasets": "list the datasets (name, kind, size, bounds/domain)",
        "estimate": ("summarize an estimate: a one-shot LDP simulation on a column of a CSV/Parquet file (beside the "
                     "data's own, non-private truth), or a saved state"),
    },
    "dpdist.cli._deploy": {
        "privatize": "randomize a column of a CSV/Parquet file into a report file (client side, in batch)",
        "aggregate": "add report files to a durable aggregator state (incremental, no file counted twice)",
    },
    "dpdist.cli._release": {
        "release": "central DP: release a private CDF and quantiles of one column (trusted curator)",
    },
    "dpdist.cli._query": {
        "query": "central DP: one SQL SELECT of statistics per group over CSV/Parquet files, under one budget",
    },
    "dpdist.cli._serve": {
        "serve": "run the collection service (campaigns, report ingest, estimates, dashboard)",
    },
    "dpdist.cli._backup": {
        "backup": "copy a SQLite database of dpdist (service, relay queue, issuer store) while it runs; restore it",
    },
    "dpdist.cli._campaign": {
        "campaign": "create, open, close, inspect, estimate and export campaigns of a dpdist service (admin)",
    },
    "dpdist.cli._submit": {
        "submit": "randomize a column locally (CSPRNG) and submit it to a campaign, or submit report files",
    },
    "dpdist.cli._budget": {
        "budget": "create or show a privacy budget file, charged by 'release', 'privatize', 'submit', 'campaign open'",
    },
    "dpdist.cli._explain": {
        "explain": ("what epsilon buys: the expected error of a local protocol or central release at --n, "
                    "before any data"),
    },
    "dpdist.cli._relay": {
        "relay": "run the relay between devices and a collector (sealed reports in, shuffled batches out)",
    },
    "dpdist.cli._issuer": {
        "issuer": "run a Privacy Pass token issuer for relayed campaigns, create its keys, mint credentials",
    },
    "dpdist.cli._audit": {
        "audit": "certify a local randomizer's epsilon: a lower bound at a stated confidence, a verdict",
    },
}
#: each sub-command's line in ``dpdist --help``
HELP = {command: line for commands in COMMANDS.values() for command, line in commands.items()}
