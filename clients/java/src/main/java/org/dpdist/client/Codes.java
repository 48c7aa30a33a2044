package org.dpdist.client;

import java.util.Arrays;
import java.util.Collections;
import java.util.HashSet;
import java.util.Set;

/**
 * The closed set of codes with which dpdist's servers refuse a request (Python's {@code dpdist._http._codes.CODES}, which
 * {@code tests/http/test_codes.py} checks this copy against): an answer is shown as a dpdist refusal only when its
 * {@code error} is one ({@link Shown#refusal}).
 */
final class Codes {
    static final Set<String> CODES = Collections.unmodifiableSet(new HashSet<>(Arrays.asList((
        "above_key_ceiling batch_id_mismatch batch_id_required batch_id_reused batch_of_another_campaign "
        + "body_timeout busy campaign_changed campaign_closed campaign_exists campaign_full campaign_not_open "
        + "client_disconnected collector_unavailable config_frozen config_too_large contribution_limit "
        + "database_unavailable enrollment_off estimate_out_of_memory estimate_timeout estimates_busy exhausted "
        + "head_too_large http_error identity_changed internal invalid_batch_id invalid_campaign "
        + "invalid_campaign_id invalid_config invalid_count invalid_enrollment invalid_envelopes invalid_json "
        + "invalid_keep_reports invalid_key_id invalid_key_name invalid_max_reports invalid_option invalid_query "
        + "invalid_relay invalid_report_id invalid_rounds invalid_submit_token invalid_token invalid_token_request "
        + "invalid_tokens_each key_exists key_in_use last_key malformed_batch malformed_binary_http "
        + "method_not_allowed no_identity no_ohttp_key no_relay_token no_reports not_decapsulated not_encapsulated "
        + "not_found not_installed not_ohttp not_relayed not_rounds not_sealed not_served_by_relay "
        + "not_through_gateway ohttp_dialect_mismatch ohttp_key_mismatch ohttp_keys_full pin_mismatch rate_limited "
        + "relayed_campaign replayed_report reports_not_kept round_name_taken rounds_campaign sealed_v1_off "
        + "shutting_down stale_round statistic_too_large token_in_query token_not_bound token_required token_spent too_large "
        + "too_many_chunks too_many_items_to_plot too_many_records too_many_rows unauthorized unknown_campaign "
        + "unknown_key unknown_key_id unsupported_content_encoding unsupported_media_type wrong_key wrong_length "
        + "wrong_state ").trim().split(" "))));

    private Codes() {
    }
}
