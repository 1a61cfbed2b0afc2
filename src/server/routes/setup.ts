/**
 * Domain setup: the coordination domain with its bypass-path disclosure (AOC-REQ-001; admin),
 * provider profiles and authority budgets (operator). Each write is one service transaction with
 * the token's id as the evidence actor.
 */
import { BatonError } from '../../core/errors.js';
import { validateProfile, type AuthorityInput, type DomainConfigInput } from '../../occurrences/index.js';
import { uncoveredCredentials, type KeyResolver } from '../../providers/index.js';
import { actorOf } from '../auth.js';
import { bodyObject, param, timed, tokenOf, type RouteSpec, type ServerDeps } from '../route.js';
import { idParams, name, object } from '../schemas/common.js';
import { authorityBody, domainConfigBody, profileBody } from '../schemas/inputs.js';
import { authority, domain, registeredProfile } from '../schemas/records.js';

export function setupRoutes(deps: ServerDeps): RouteSpec[] {
  const svc = deps.service;
  return [
    {
      method: 'PUT',
      url: '/v1/domain',
      operationId: 'configureDomain',
      summary: 'Configure the coordination domain: limits and the bypass-path disclosure',
      tag: 'domain',
      roles: ['admin'],
      schema: { body: domainConfigBody, response: { 200: domain } },
      handler: async (input) => {
        const cfg = bodyObject(input) as unknown as DomainConfigInput;
        const actor = actorOf(tokenOf(input));
        return { body: await timed(deps, 'configure_domain', () => svc.configureDomain(cfg, actor)) };
      },
    },
    {
      method: 'GET',
      url: '/v1/domain',
      operationId: 'getDomain',
      summary: 'The coordination domain, with its bypass-path disclosure',
      tag: 'domain',
      roles: ['operator'],
      schema: { response: { 200: domain } },
      handler: async () => ({ body: await timed(deps, 'get_domain', () => svc.getDomain()) }),
    },
    {
      method: 'POST',
      url: '/v1/profiles',
      operationId: 'registerProfile',
      summary: 'Register a provider profile document (immutable once registered)',
      tag: 'profiles',
      roles: ['operator'],
      schema: { body: profileBody, response: { 200: registeredProfile } },
      handler: async (input) => {
        const actor = actorOf(tokenOf(input));
        const register = async () => {
          refuseUncoveredCredentials(input.body, deps.keys);
          return svc.registerProfile(input.body, actor);
        };
        return { body: await timed(deps, 'register_profile', register) };
      },
    },
    {
      method: 'GET',
      url: '/v1/profiles/:id/:version',
      operationId: 'getProfile',
      summary: 'A registered provider profile version',
      tag: 'profiles',
      roles: ['operator'],
      schema: { params: object({ id: name, version: name }), response: { 200: registeredProfile } },
      handler: async (input) => {
        const [id, version] = [param(input, 'id'), param(input, 'version')];
        return { body: await timed(deps, 'get_profile', () => svc.getProfile(id, version)) };
      },
    },
    {
      method: 'POST',
      url: '/v1/authorities',
      operationId: 'createAuthority',
      summary: 'Create an authority budget (idempotent for identical terms)',
      tag: 'authorities',
      roles: ['operator'],
      schema: { body: authorityBody, response: { 200: authority } },
      handler: async (input) => {
        const a = bodyObject(input) as unknown as AuthorityInput;
        const actor = actorOf(tokenOf(input));
        return { body: await timed(deps, 'create_authority', () => svc.createAuthority(a, actor)) };
      },
    },
    {
      method: 'GET',
      url: '/v1/authorities/:id',
      operationId: 'getAuthority',
      summary: 'An authority budget: total, reserved, consumed',
      tag: 'authorities',
      roles: ['operator'],
      schema: { params: idParams, response: { 200: authority } },
      handler: async (input) => {
        const id = param(input, 'id');
        return { body: await timed(deps, 'get_authority', () => svc.getAuthority(id)) };
      },
    },
  ];
}

/**
 * A profile whose call would send a credential this server holds to an origin that credential's
 * entry does not list is refused before anything is stored (`400 input_invalid` naming the URL's
 * path): the operator learns at once instead of at the first reconcile. The check at the moment of
 * sending (`exchange`, providers/credential-header.ts) is the guard; this is the early answer.
 */
function refuseUncoveredCredentials(document: unknown, keys: KeyResolver): void {
  // An invalid profile is refused by registerProfile with its own path (profile_invalid).
  let profile;
  try {
    profile = validateProfile(document);
  } catch {
    return;
  }
  const [first] = uncoveredCredentials(profile, keys);
  if (first === undefined) return;
  const where = first.origin ?? 'an origin a placeholder decides';
  throw new BatonError(
    'input_invalid',
    `${first.path}: credential ${first.credential} may not be sent to ${where}; ` +
      'add the origin to its "origins" in the credentials document if it belongs there',
    { path: first.path, credential: first.credential },
  );
}
