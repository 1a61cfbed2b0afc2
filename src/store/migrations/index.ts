/**
 * Every schema migration, in the order they apply (DESIGN.md §2). Each context appends its own
 * module here with the next free id; ids are never reused or renumbered once released.
 */
import type { Migration } from '../migrations.js';
import { migration as m001 } from './001_evidence_log.js';
import { migration as m002 } from './002_occurrences.js';
import { migration as m003 } from './003_api_tokens.js';
import { migration as m004 } from './004_no_hot_rows.js';
import { migration as m005 } from './005_occurrence_listing.js';
import { migration as m006 } from './006_missions.js';
import { migration as m007 } from './007_observations.js';
import { migration as m008 } from './008_mission_issuers.js';
import { migration as m010 } from './010_reconciliation.js';
import { migration as m011 } from './011_console_sessions.js';
import { migration as m012 } from './012_transition_functions.js';
import { migration as m013 } from './013_occurrence_counts.js';
import { migration as m014 } from './014_known_head_appends.js';
import { migration as m016 } from './016_one_call_transitions.js';
import { migration as m018 } from './018_harness_item_listing.js';
import { migration as m021 } from './021_fewer_write_btrees.js';
import { migration as m022 } from './022_static_transition_writes.js';
import { migration as m023 } from './023_fewer_update_indexes.js';
import { migration as m024 } from './024_one_stripe_write.js';
import { migration as m025 } from './025_stripe_counts.js';
import { migration as m026 } from './026_reissue_successor.js';
import { migration as m027 } from './027_observation_conflicts.js';
import { migration as m028 } from './028_handovers.js';
import { migration as m029 } from './029_observation_producers.js';
import { migration as m030 } from './030_sets_seen_expiry.js';
import { migration as m031 } from './031_evidence_append_only.js';
import { migration as m032 } from './032_observation_single_successor.js';
import { migration as m033 } from './033_mission_issuer_unpins.js';
import { migration as m034 } from './034_occurrence_reference_index.js';
import { migration as m035 } from './035_pin_stale_bound_null.js';
import { migration as m036 } from './036_append_only_replace.js';

export const migrations: readonly Migration[] = [
  m001,
  m002,
  m003,
  m004,
  m005,
  m006,
  m007,
  m008,
  m010,
  m011,
  m012,
  m013,
  m014,
  m016,
  m018,
  m021,
  m022,
  m023,
  m024,
  m025,
  m026,
  m027,
  m028,
  m029,
  m030,
  m031,
  m032,
  m033,
  m034,
  m035,
  m036,
];
