/**
 * The one identifier grammar (lineages, creation keys, harness item/session ids, idempotency keys,
 * sources…): the route schema `name` (src/server/schemas/common.ts), the occurrences service's
 * readers (src/occurrences/validate.ts) and the harness readers (src/missions/inputs.ts) all use it,
 * so a name accepted in process is one the routes accept too, and an item made in process is never
 * unreachable over HTTP.
 */
export const NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._:@/-]{0,127}$';
export const NAME = new RegExp(NAME_PATTERN);
