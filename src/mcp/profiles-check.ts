/**
 * At gateway start: every consequential tool's provider profile (id@version) must be registered at
 * Baton. Otherwise every call of that tool would be refused `profile_not_found` at create — a
 * gateway that starts cleanly and refuses everything. A sandbox-pinned profile is registered under
 * `<version>.<8 hex>` (src/providers/profiles.ts), so the refusal names the versions that exist.
 */
import { BatonError, isBatonError } from '../core/errors.js';
import type { McpPolicy } from './policy.js';

/** What the check reads of Baton (operator role: the role a gateway takes over with). */
export interface ProfileCatalog {
  /** Throws `profile_not_found` when that version is not registered. */
  getProfile(id: string, version: string): Promise<unknown>;
  /** The registered versions of profile `id` (one page; `truncated` when there were more). */
  versions(id: string): Promise<{ versions: readonly string[]; truncated: boolean }>;
}

export async function checkPolicyProfiles(policy: McpPolicy, catalog: ProfileCatalog): Promise<void> {
  for (const p of policy.tools.values()) {
    const { profileId, profileVersion } = p.provider;
    try {
      await catalog.getProfile(profileId, profileVersion);
      continue;
    } catch (error) {
      if (!isBatonError(error) || error.code !== 'profile_not_found') throw error;
    }
    const { versions, truncated } = await catalog.versions(profileId);
    const known =
      versions.length === 0
        ? `no version of ${profileId} is registered`
        : `registered versions of ${profileId}: ${versions.join(', ')}${truncated ? ', …' : ''}`;
    throw new BatonError(
      'mcp_policy_invalid',
      `tool ${p.tool}: provider profile ${profileId}@${profileVersion} is not registered at Baton (${known}); a profile pinned to a deployment is registered as <version>.<8 hex>`,
      { tool: p.tool, profileId, profileVersion, registered: [...versions] },
    );
  }
}
