-- steward migration 0001: the control-plane DB tables named by the seed (#613).
-- The seed shows names, not DDL; docs/formats.md "Control-plane DB" documents
-- every column and marks what steward added.

CREATE TABLE IF NOT EXISTS schema_meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE IF NOT EXISTS sessions (
    session_id             TEXT PRIMARY KEY,
    role                   TEXT NOT NULL DEFAULT '',
    profile                TEXT NOT NULL DEFAULT '',
    pid                    INTEGER,
    host                   TEXT NOT NULL DEFAULT '',
    controller_instance_id TEXT NOT NULL DEFAULT '',
    status                 TEXT NOT NULL DEFAULT 'active',
    started_at             TEXT NOT NULL,
    last_heartbeat_at      TEXT,
    ended_at               TEXT
);

CREATE TABLE IF NOT EXISTS work_items (
    work_item_id INTEGER PRIMARY KEY AUTOINCREMENT,
    remote       TEXT NOT NULL,
    org          TEXT NOT NULL,
    repo         TEXT NOT NULL,
    work_kind    TEXT NOT NULL CHECK (work_kind IN ('issue', 'pr')),
    work_number  INTEGER NOT NULL,
    title        TEXT NOT NULL DEFAULT '',
    state        TEXT NOT NULL DEFAULT 'open',
    UNIQUE (remote, org, repo, work_kind, work_number)
);

CREATE TABLE IF NOT EXISTS leases (
    lease_id                TEXT PRIMARY KEY,
    work_item_id            INTEGER NOT NULL REFERENCES work_items(work_item_id),
    session_id              TEXT NOT NULL,
    role                    TEXT NOT NULL DEFAULT '',
    task_class              TEXT NOT NULL DEFAULT '',
    phase                   TEXT NOT NULL DEFAULT 'allocated',
    status                  TEXT NOT NULL DEFAULT 'active'
                            CHECK (status IN ('active', 'released', 'expired', 'abandoned')),
    created_at              TEXT NOT NULL,
    expires_at              TEXT,
    last_heartbeat_at       TEXT,
    heartbeat_count         INTEGER NOT NULL DEFAULT 0,
    released_at             TEXT,
    expected_head_sha       TEXT NOT NULL DEFAULT '',
    allowed_actions         TEXT NOT NULL DEFAULT '[]',
    forbidden_actions       TEXT NOT NULL DEFAULT '[]',
    provenance_json         TEXT NOT NULL DEFAULT '',
    owner_pid               INTEGER,
    owner_host              TEXT NOT NULL DEFAULT '',
    worktree_path           TEXT NOT NULL DEFAULT '',
    adopted_by_session_id   TEXT,
    adopted_from_session_id TEXT,
    end_reason              TEXT NOT NULL DEFAULT ''
);

-- At most one active lease per work item: the database itself refuses a
-- second concurrent owner even if a caller skipped the guard.
CREATE UNIQUE INDEX IF NOT EXISTS leases_one_active_per_item
    ON leases (work_item_id) WHERE status = 'active';
CREATE INDEX IF NOT EXISTS leases_status ON leases (status);
CREATE INDEX IF NOT EXISTS leases_session ON leases (session_id);

CREATE TABLE IF NOT EXISTS assignments (
    assignment_id TEXT PRIMARY KEY,
    lease_id      TEXT NOT NULL REFERENCES leases(lease_id),
    session_id    TEXT NOT NULL,
    work_item_id  INTEGER NOT NULL REFERENCES work_items(work_item_id),
    role          TEXT NOT NULL DEFAULT '',
    created_at    TEXT NOT NULL,
    status        TEXT NOT NULL DEFAULT 'active'
);
CREATE INDEX IF NOT EXISTS assignments_lease ON assignments (lease_id);

CREATE TABLE IF NOT EXISTS terminal_locks (
    terminal_lock_id INTEGER PRIMARY KEY AUTOINCREMENT,
    work_item_id     INTEGER NOT NULL REFERENCES work_items(work_item_id),
    session_id       TEXT NOT NULL,
    lease_id         TEXT,
    kind             TEXT NOT NULL DEFAULT 'merge',
    status           TEXT NOT NULL DEFAULT 'active',
    created_at       TEXT NOT NULL,
    released_at      TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS terminal_locks_one_active_per_item
    ON terminal_locks (work_item_id) WHERE status = 'active';

CREATE TABLE IF NOT EXISTS events (
    event_id     INTEGER PRIMARY KEY AUTOINCREMENT,
    work_item_id INTEGER,
    event_type   TEXT NOT NULL,
    message      TEXT NOT NULL DEFAULT '',
    created_at   TEXT NOT NULL,
    -- steward additions: the seed's events record no session; a refused
    -- claim must name both the requesting and the holding session.
    session_id   TEXT,
    detail_json  TEXT
);
CREATE INDEX IF NOT EXISTS events_work_item ON events (work_item_id);
