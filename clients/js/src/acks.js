// What a device takes as the acknowledgement of what it sent: the server's answer naming that campaign and that id.
//
// A proxy, a captive portal, a stale or misrouted server, or anyone on the path can answer 200 with another body; a
// client that takes any 200 as "counted" forgets the batch (docs/explanation/delivery.md, "What counts as an acknowledgement").  An
// answer acknowledges a batch only when it is a JSON object that names the campaign and the batch id sent (the relay's:
// the report id sent) with the fields the service's acknowledgement has (accepted, rejected, duplicate; the relay's:
// duplicate), and counts that fit the batch: accepted at most n_read and both at most the reports sent (a duplicate's
// counts are the first time's, of the same bytes).  Any other answer, a body that is not JSON or is cut short included, is no acknowledgement: the client
// sends the same id and bytes again under its retry rule, and says so when its window runs out.  The Python client
// (dpdist/_http/_acks.py) and the Java client (Client.ackProblem) apply the same rule.

/** How the problem of an answer that is no acknowledgement opens. */
export const NOT_ACKNOWLEDGED = 'no acknowledgement';

const isCount = (value) => Number.isInteger(value) && value >= 0;

/**
 * The fields of the service's acknowledgement of a batch that are missing, of another type or counting more reports
 * than were read or ``sent`` (if known) ('' if none).
 */
function collectorFields(ack, sent = null) {
  const wrong = [];
  const nRead = ack.n_read;
  if (!isCount(ack.accepted)) wrong.push("'accepted' (an integer >= 0)");
  else if (nRead !== undefined && (!isCount(nRead) || ack.accepted > nRead)) wrong.push(`'n_read' (an integer >= 'accepted', ${ack.accepted})`);
  if (sent !== null && isCount(ack.accepted) && ack.accepted > sent) wrong.push(`'accepted' (at most the ${sent} report(s) sent: ${ack.accepted})`);
  if (sent !== null && isCount(nRead) && nRead > sent) wrong.push(`'n_read' (at most the ${sent} report(s) sent: ${nRead})`);
  const rejected = ack.rejected;
  if (rejected === null || typeof rejected !== 'object' || Array.isArray(rejected) || !Object.values(rejected).every(Number.isInteger)) {
    wrong.push("'rejected' (an object of counts)");
  }
  if (typeof ack.duplicate !== 'boolean') wrong.push("'duplicate' (true or false)");
  return wrong.join(', ');
}

/** The fields of a relay's acknowledgement of a report that are missing or of another type ('' if none). */
function relayFields(ack) {
  return typeof ack.duplicate === 'boolean' ? '' : "'duplicate' (true or false)";
}

function problemOf(text, status, contentType, campaign, idKey, sent, fields) {
  const what = `${idKey.replace('_', ' ')} '${sent}' of campaign '${campaign}'`;
  let ack;
  try {
    ack = JSON.parse(text);
  } catch {
    return `${NOT_ACKNOWLEDGED} of ${what}: HTTP ${status} with a body that is not JSON (${text.length} characters, ${contentType || 'no content type'})`;
  }
  if (ack === null || typeof ack !== 'object' || Array.isArray(ack)) return `${NOT_ACKNOWLEDGED} of ${what}: HTTP ${status} with JSON that is not an object`;
  if (ack[idKey] !== sent || ack.campaign !== campaign) {
    const named = (value) => JSON.stringify(value === undefined ? null : value).slice(0, 100);
    return `${NOT_ACKNOWLEDGED} of ${what}: HTTP ${status} naming ${idKey.replace('_', ' ')} ${named(ack[idKey])} of campaign ${named(ack.campaign)}`;
  }
  const missing = fields(ack);
  return missing ? `${NOT_ACKNOWLEDGED} of ${what}: HTTP ${status} without ${missing}` : null;
}

/**
 * A checker for ``Client._request``'s ``acknowledges`` option: ``(text, response) => [ack, problem]``, the parsed
 * acknowledgement and null if ``text`` (the answer's body) is the service's acknowledgement of batch ``batchId`` of
 * ``campaign``, else null and what it is.  ``sent``: the reports the batch carried, if known (an acknowledgement
 * counting more is none).
 */
export function batchAck(campaign, batchId, sent = null) {
  return (text, response) => {
    const problem = problemOf(text, response.status, response.headers?.get?.('Content-Type'), campaign, 'batch_id', batchId,
      (ack) => collectorFields(ack, sent));
    return problem === null ? [JSON.parse(text), null] : [null, problem];
  };
}

/** As ``batchAck``, for a relay's acknowledgement of report ``reportId`` of ``campaign``. */
export function relayAck(campaign, reportId) {
  return (text, response) => {
    const problem = problemOf(text, response.status, response.headers?.get?.('Content-Type'), campaign, 'report_id', reportId, relayFields);
    return problem === null ? [JSON.parse(text), null] : [null, problem];
  };
}
