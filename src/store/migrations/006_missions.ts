import type { Migration } from '../migrations.js';

/**
 * The stored half of the Mission-aware harness (build spec A6; DESIGN.md §5). One view row per
 * (origin, mission) (A3.3, C-A12); SET replay is a UNIQUE (iss, jti) (DESIGN.md §2: uniqueness by
 * the database); work items carry their binding, action class, CAS `version` (HAR-28) and, once
 * governed work creates one, their occurrence; `msn_occurrence_gates` is what provider entry reads
 * (A3.6). Bindings, handles and matrices are JCS text. Times are epoch milliseconds. Issuer pins
 * (`msn_issuers`) belong to the consuming half and are created by its migration.
 */
export const migration: Migration = {
  id: 6,
  name: 'missions',
  up: `
CREATE TABLE msn_views (
  origin TEXT NOT NULL,
  mission_id TEXT NOT NULL,
  state TEXT,
  state_source TEXT CHECK (state_source IN ('status', 'signal')),
  authority_hash TEXT,
  signal_version BIGINT NOT NULL,
  last_signal_jti TEXT,
  non_active_committed_at BIGINT,
  status_issued_at BIGINT,
  checked_at BIGINT,
  fresh_until BIGINT,
  mission_expiry BIGINT,
  updated_at BIGINT NOT NULL,
  version BIGINT NOT NULL,
  PRIMARY KEY (origin, mission_id)
);
CREATE TABLE msn_sets_seen (
  iss TEXT NOT NULL,
  jti TEXT NOT NULL,
  digest TEXT NOT NULL,
  received_at BIGINT NOT NULL,
  UNIQUE (iss, jti)
);
CREATE TABLE msn_keys (
  origin TEXT NOT NULL,
  kid TEXT NOT NULL,
  thumbprint TEXT NOT NULL,
  jwk TEXT,
  first_seen_at BIGINT NOT NULL,
  PRIMARY KEY (origin, kid, thumbprint)
);
CREATE TABLE msn_status_archive (
  jws_digest TEXT NOT NULL PRIMARY KEY,
  origin TEXT NOT NULL,
  mission_id TEXT NOT NULL,
  jws TEXT NOT NULL,
  kid TEXT NOT NULL,
  thumbprint TEXT NOT NULL,
  checked_at BIGINT NOT NULL
);
CREATE INDEX msn_status_archive_mission ON msn_status_archive (origin, mission_id);
CREATE TABLE msn_stop_matrices (
  ref TEXT NOT NULL PRIMARY KEY,
  digest TEXT NOT NULL,
  document TEXT NOT NULL,
  registered_at BIGINT NOT NULL
);
CREATE TABLE msn_sessions (
  id TEXT NOT NULL PRIMARY KEY,
  lineage TEXT,
  mission_origin TEXT NOT NULL,
  mission_id TEXT NOT NULL,
  binding TEXT NOT NULL,
  tainted BIGINT NOT NULL,
  created_at BIGINT NOT NULL,
  version BIGINT NOT NULL
);
CREATE TABLE msn_items (
  id TEXT NOT NULL PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('task_node', 'queue_item', 'background_job', 'subagent_handle')),
  session_id TEXT REFERENCES msn_sessions (id),
  lineage TEXT,
  parent_id TEXT REFERENCES msn_items (id),
  mission_origin TEXT,
  mission_id TEXT,
  binding TEXT,
  parent_mission_origin TEXT,
  parent_mission_id TEXT,
  action_class TEXT NOT NULL,
  not_before BIGINT,
  expires_at BIGINT,
  retry_of TEXT REFERENCES msn_items (id),
  idempotency_key TEXT,
  state TEXT NOT NULL CHECK (state IN ('queued', 'running', 'paused', 'suppressed', 'handed_off', 'terminated', 'done')),
  hold BIGINT NOT NULL,
  handle TEXT,
  occurrence_id TEXT,
  claimed_generation BIGINT,
  matrix_digest TEXT,
  created_at BIGINT NOT NULL,
  updated_at BIGINT NOT NULL,
  version BIGINT NOT NULL
);
CREATE INDEX msn_items_mission ON msn_items (mission_origin, mission_id, state);
CREATE INDEX msn_items_parent_mission ON msn_items (parent_mission_origin, parent_mission_id);
CREATE INDEX msn_items_parent ON msn_items (parent_id);
CREATE TABLE msn_occurrence_gates (
  occurrence_id TEXT NOT NULL PRIMARY KEY,
  work_item_id TEXT NOT NULL REFERENCES msn_items (id),
  mission_origin TEXT NOT NULL,
  mission_id TEXT NOT NULL,
  action_class TEXT NOT NULL
);
CREATE TABLE msn_cache_flags (
  mission_origin TEXT NOT NULL,
  mission_id TEXT NOT NULL,
  reason TEXT NOT NULL,
  flagged_at BIGINT NOT NULL,
  PRIMARY KEY (mission_origin, mission_id, flagged_at)
)
`,
};
