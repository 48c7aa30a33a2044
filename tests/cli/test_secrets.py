"""``dpdist.cli._secrets``: the secrets a command holds (its token options and variables, its URLs' passwords), masked
in every line it writes (the whole property, through each output path: tests/test_shown.py)."""

from __future__ import annotations

import argparse
import io

from dpdist.cli._secrets import MaskedStream, command_secrets


def test_a_commands_secrets_are_its_named_options_and_variables_and_its_urls_passwords():
    args = argparse.Namespace(admin_token="admin-0123456789", server="http://u:srv-pw@h:1", db="postgresql://d@h/x?password=db-pw",
                              name="not-a-secret", tokens_each=3)
    environ = {"DPDIST_ISSUER_CREDENTIAL": "cred-0123", "DPDIST_NAME": "x", "HTTPS_PROXY": "http://p:proxy-pw@proxy:3128",
               "OTHER_TOKEN": "not-dpdist's"}
    assert set(command_secrets(args, environ)) == {"admin-0123456789", "srv-pw", "db-pw", "cred-0123", "proxy-pw"}


def test_a_masked_stream_masks_every_write_and_keeps_the_rest_of_the_stream():
    kept = io.StringIO()
    stream = MaskedStream(kept, ("admin-0123456789",))
    stream.write("dpdist: error: you sent admin-0123456789 (YWRtaW4tMDEyMzQ1Njc4OQ)\n")
    assert kept.getvalue() == "dpdist: error: you sent *** (***)\n" and stream.unmasked is kept and stream.getvalue() == kept.getvalue()
