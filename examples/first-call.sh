#!/usr/bin/env bash
# Your first guarded call with curl (README "First guarded call"): the same steps the SDK's
# executor.perform takes in examples/first-call.ts, one HTTP call each, so you can see the API.
# Expects `baton sandbox` on 127.0.0.1:4010 and `baton serve --config examples/baton.config.json`
# on 127.0.0.1:4001 (the README's first two commands). Needs bash, curl and node (for JSON).
# Usage: bash examples/first-call.sh [INVOICE]
set -euo pipefail

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
# call METHOD URL BEARER [BODY]: one API call; a non-2xx answer prints the problem and stops.
call() {
  curl -sS --fail-with-body -X "$1" "$2" -H "authorization: Bearer $3" \
    ${4:+-H 'content-type: application/json' --data-binary "$4"}
}

# 0. Wait (at most 30 s) for the server started in the background a moment ago.
for _ in $(seq 120); do curl -sf "$BATON_URL/readyz" >/dev/null && break; sleep 0.25; done

# 1. The operator token `serve --config` wrote to examples/first-call.tokens.json (mode 0600).
TOKEN=$(get tokens.0.token <"$HERE/first-call.tokens.json")

# 2. The profile version the config registered, pinned to the running sandbox (the newest one).
VERSION=$(call GET "$BATON_URL/v1/profiles" "$TOKEN" | node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
  const ps = JSON.parse(s).profiles.filter((p) => p.id === process.argv[1]);
  console.log(ps.sort((a, b) => b.registeredAt - a.registeredAt)[0].version);
});' "$PROFILE_ID")

# 3. Takeover: this script becomes the lineage's current executor; the credential is its bearer.
CREDENTIAL=$(call POST "$BATON_URL/v1/lineages/first-call-curl/takeover" "$TOKEN" | get credential)

# 4. Create the occurrence: the invoice is the creation key, so a repeat returns the original.
BODY=$(printf '{"creationKey":"%s","provider":{"profileId":"%s","profileVersion":"%s"},"request":{"amount":1250,"currency":"eur","payee":"acme-supplies","invoice":"%s"},"authority":{"id":"first-call-payments","amount":1250}}' \
  "$INVOICE" "$PROFILE_ID" "$VERSION" "$INVOICE")
OCCURRENCE=$(call POST "$BATON_URL/v1/occurrences" "$CREDENTIAL" "$BODY" | get occurrence.id)

# 5. Enter: the provider-entry compare-and-set. Authority is consumed now; the ticket says exactly
#    what to send and under which native idempotency key. An occurrence is entered at most once.
TICKET=$(call POST "$BATON_URL/v1/occurrences/$OCCURRENCE/enter" "$CREDENTIAL" '{}')
REQUEST=$(get request <<<"$TICKET")
KEY=$(get nativeKey <<<"$TICKET")
HEADER=$(get nativeKeyHeader <<<"$TICKET")

# 6. Send it to the provider, once.
curl -sS --fail-with-body -X POST "$SANDBOX_URL/v1/accounts/acct_sandbox/payments" \
  -H 'content-type: application/json' -H "$HEADER: $KEY" --data-binary "$REQUEST" >/dev/null

# 7. Reconcile: Baton asks the profile's pinned status sources and verifies their signatures; only
#    that moves the outcome (an executor's own report is unauthenticated evidence).
call POST "$BATON_URL/v1/occurrences/$OCCURRENCE/reconcile" "$CREDENTIAL" '{}' | node -e 'let s = ""; process.stdin.on("data", (d) => (s += d)).on("end", () => {
  const o = JSON.parse(s).occurrence;
  const status = o.phase === "resolved" && o.effect === "occurred" ? "succeeded" : "unresolved";
  console.log(JSON.stringify({ invoice: process.argv[1], status, occurrenceId: o.id, nativeKey: o.provider.nativeKey,
    phase: o.phase, outcome: o.outcome, effect: o.effect }));
  process.exitCode = status === "succeeded" ? 0 : 1;
});' "$INVOICE"
