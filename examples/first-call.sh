#!/usr/bin/env bash
# Your first guarded call with curl (README "First guarded call"): the same steps the SDK's
# executor.perform takes in examples/first-call.ts, one HTTP call each, so you can see the API.
# Expects `baton sandbox` on 127.0.0.1:4010 and `baton serve --config examples/baton.config.json`
# on 127.0.0.1:4001 (the README's first two commands). Needs bash, curl and node (for JSON).
# Usage: bash examples/first-call.sh [INVOICE]
# Environment: BATON_URL (default http://127.0.0.1:4001) and SANDBOX_URL (default
# http://127.0.0.1:4010) name other servers; it prints on stderr which ones it uses.
set -euo pipefail

BATON_URL_FROM_ENV="${BATON_URL:+1}"
SANDBOX_URL_FROM_ENV="${SANDBOX_URL:+1}"
BATON_URL="${BATON_URL:-http://127.0.0.1:4001}"
SANDBOX_URL="${SANDBOX_URL:-http://127.0.0.1:4010}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
INVOICE="${1:-inv-sh-$(date +%s%N)}"
PROFILE_ID=sandbox-payments-ed25519

# get PATH: read JSON on stdin and print the member at a dotted PATH (strings bare, others as JSON).
get() {
  node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
    let v = JSON.parse(s);
    for (const k of process.argv[1].split(".")) v = v?.[k];
    if (v === undefined) { console.error(`no ${process.argv[1]} in the answer: ${s}`); process.exit(1); }
    console.log(typeof v === "string" ? v : JSON.stringify(v));
  });' "$1"
}
# http METHOD URL [CURL ARGS…]: one HTTP call; the body of a 2xx answer goes to stdout. Any other
# answer prints the status and the problem body on stderr and fails — also inside $(…), which
# would otherwise swallow the body and leave only curl's exit code.
http() {
  local answer status
  answer=$(curl -sS -X "$1" "$2" "${@:3}" -w '\n%{http_code}') || return
  status=${answer##*$'\n'}
  answer=${answer%$'\n'*}
  if [[ $status != 2?? ]]; then
    printf 'first-call.sh: %s %s answered %s: %s\n' "$1" "$2" "$status" "$answer" >&2
    return 1
  fi
  printf '%s\n' "$answer"
}
# call METHOD URL BEARER [BODY]: one Baton API call (a non-2xx answer prints the problem and stops).
call() {
  http "$1" "$2" -H "authorization: Bearer $3" ${4:+-H 'content-type: application/json' --data-binary "$4"}
}
# summary ADAPTER_CALLS [REASON] [OPEN_REASON]: the occurrence on stdin as one result line, the same
# members first-call.ts prints (OPEN_REASON only while it is unresolved, and Baton's missingKnowledge
# when the answer carries one); exit 0 only when it resolved with the effect.
summary() {
  node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
    const answer = JSON.parse(s);
    const o = answer.occurrence;
    const settled = o.phase === "resolved" && !o.conflict;
    const status = o.phase === "released" ? "refused" : settled && o.effect === "occurred" ? "succeeded"
      : settled && o.effect === "none_confirmed" ? "failed" : "unresolved";
    const reason = process.argv[3] || (o.unresolved && process.argv[4]) || "";
    const missing = status === "unresolved" && answer.missingKnowledge ? answer.missingKnowledge : "";
    console.log(JSON.stringify({ invoice: process.argv[1], status, occurrenceId: o.id, nativeKey: o.provider.nativeKey,
      phase: o.phase, outcome: o.outcome, effect: o.effect, adapterCalls: Number(process.argv[2]),
      ...(reason ? { reason } : {}), ...(missing ? { missingKnowledge: missing } : {}) }));
    process.exitCode = status === "succeeded" ? 0 : 1;
  });' "$INVOICE" "$1" "${2:-}" "${3:-}"
}

# Which servers this talks to: BATON_URL and SANDBOX_URL, when exported, win over the README's ports.
printf 'first-call.sh: Baton at %s%s, sandbox at %s%s\n' \
  "$BATON_URL" "${BATON_URL_FROM_ENV:+ (from BATON_URL)}" "$SANDBOX_URL" "${SANDBOX_URL_FROM_ENV:+ (from SANDBOX_URL)}" >&2

# 0. Wait (at most 30 s) for the server started in the background a moment ago.
READY=""
for _ in $(seq 120); do curl -sf "$BATON_URL/readyz" >/dev/null && READY=1 && break; sleep 0.25; done
if [[ -z $READY ]]; then
  printf '%s\n' "first-call.sh: Baton did not answer at $BATON_URL within 30 s" >&2
  exit 1
fi

# 1. The operator token `serve --config` wrote to examples/first-call.tokens.json (mode 0600),
#    looked up by its name (the config's tokens section may list others before it).
TOKEN=$(node -e 'const f = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  const t = (f.tokens ?? []).find((x) => x.name === "first-call-operator");
  if (t === undefined) { console.error("first-call.sh: no first-call-operator token in " + process.argv[1]); process.exit(1); }
  console.log(t.token);' "$HERE/first-call.tokens.json")

# 2. The profile version pinned to the sandbox now running: its Ed25519 key (from its public
#    /.well-known/baton-sandbox) in every pin, its URL in every status source Baton asks. A sandbox restarted
#    since `serve --config` pinned has new keys: a payment under an old version (or the shipped,
#    unpinned one) could never be confirmed, so none is sent; the script stops and says what to do.
SANDBOX_FACTS=$(http GET "$SANDBOX_URL/.well-known/baton-sandbox")
PROFILES=$(call GET "$BATON_URL/v1/profiles" "$TOKEN")
VERSION=""
for V in $(node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
  const ps = JSON.parse(s).profiles.filter((p) => p.id === process.argv[1]);
  for (const p of ps.sort((a, b) => b.registeredAt - a.registeredAt)) console.log(p.version);
});' "$PROFILE_ID" <<<"$PROFILES"); do
  if call GET "$BATON_URL/v1/profiles/$PROFILE_ID/$V" "$TOKEN" | node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
    const doc = JSON.parse(s).document;
    const key = JSON.parse(process.argv[1]).verification?.ed25519;
    const origin = new URL(process.argv[2]).origin;
    const pins = [doc.acknowledgement.authentication, ...doc.statusSources.map((x) => x.authentication)];
    const ok = key !== undefined && pins.every((p) => p.kind === "ed25519" && p.kid === key.kid && p.publicKey === key.jwk.x)
      && doc.statusSources.every((x) => x.kind === "webhook" || new URL(x.url).origin === origin);
    process.exitCode = ok ? 0 : 1;
  });' "$SANDBOX_FACTS" "$SANDBOX_URL"; then
    VERSION=$V
    break
  fi
done
if [[ -z $VERSION ]]; then
  printf '%s\n' "first-call.sh: no $PROFILE_ID version registered at $BATON_URL is pinned to the sandbox running at $SANDBOX_URL; nothing was sent. Restart \`baton serve --config examples/baton.config.json\` (it pins the profile to the running sandbox), or run \`baton profiles pin --from-sandbox $SANDBOX_URL\` and register what it prints." >&2
  exit 1
fi

# 3. Takeover: this script becomes the lineage's current executor; the credential is its bearer.
CREDENTIAL=$(call POST "$BATON_URL/v1/lineages/first-call-curl/takeover" "$TOKEN" | get credential)

# 4. Create the occurrence: the invoice is the creation key, so a repeat answers 200 with the
#    original ("created": false) instead of 201 with a new one.
BODY=$(printf '{"creationKey":"%s","provider":{"profileId":"%s","profileVersion":"%s"},"request":{"amount":1250,"currency":"eur","payee":"acme-supplies","invoice":"%s"},"authority":{"id":"first-call-payments","amount":1250}}' \
  "$INVOICE" "$PROFILE_ID" "$VERSION" "$INVOICE")
CREATED=$(call POST "$BATON_URL/v1/occurrences" "$CREDENTIAL" "$BODY")
OCCURRENCE=$(get occurrence.id <<<"$CREATED")

# 4a. A re-run with the same invoice: an occurrence entered before is never entered or sent again
#     (AOC-REQ-010). Print where it stands, as first-call.ts does (`existing_<phase>`); one still
#     open is asked about once more from Baton's status sources, which never re-send.
if [[ $(get created <<<"$CREATED") == false && $(get occurrence.phase <<<"$CREATED") != reserved ]]; then
  PHASE=$(get occurrence.phase <<<"$CREATED")
  if [[ $(get occurrence.unresolved <<<"$CREATED") == true ]]; then
    CREATED=$(call POST "$BATON_URL/v1/occurrences/$OCCURRENCE/reconcile" "$CREDENTIAL" '{}')
  fi
  summary 0 "existing_$PHASE" <<<"$CREATED"
  exit
fi

# 5. Enter: the provider-entry compare-and-set. Authority is consumed now; the ticket says exactly
#    what to send and under which native idempotency key. An occurrence is entered at most once.
TICKET=$(call POST "$BATON_URL/v1/occurrences/$OCCURRENCE/enter" "$CREDENTIAL" '{}')
REQUEST=$(get request <<<"$TICKET")
KEY=$(get nativeKey <<<"$TICKET")
HEADER=$(get nativeKeyHeader <<<"$TICKET")

# 6. Send it to the provider, once.
http POST "$SANDBOX_URL/v1/accounts/acct_sandbox/payments" \
  -H 'content-type: application/json' -H "$HEADER: $KEY" --data-binary "$REQUEST" >/dev/null

# 7. Reconcile: Baton asks the profile's pinned status sources and verifies their signatures; only
#    that moves the outcome (an executor's own report is unauthenticated evidence).
call POST "$BATON_URL/v1/occurrences/$OCCURRENCE/reconcile" "$CREDENTIAL" '{}' | summary 1 "" awaiting_status
