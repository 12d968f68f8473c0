//! The schemas databases were created with before the schema was shared
//! (main at 953c912), verbatim: SQLite's and PostgreSQL's steps 1 and 2
//! differed, step 3 was already shared. `migrate.rs` builds databases with
//! them and opens them with today's code.

/// SQLite, step 1.
pub const SQLITE_V1: &str = "
CREATE TABLE sessions (
    id         TEXT PRIMARY KEY NOT NULL,
    repository TEXT NOT NULL,
    mode       TEXT NOT NULL,
    model      TEXT NOT NULL,
    stop_rule  TEXT NOT NULL,
    created_at TEXT NOT NULL,
    title      TEXT,
    last_seq   INTEGER NOT NULL DEFAULT 0
) STRICT;

CREATE INDEX sessions_by_created ON sessions (created_at DESC, id DESC);

CREATE TABLE turns (
    id         TEXT PRIMARY KEY NOT NULL,
    session_id TEXT NOT NULL REFERENCES sessions (id),
    status     TEXT NOT NULL,
    started_at TEXT NOT NULL,
    ended_at   TEXT,
    error      TEXT
) STRICT;

CREATE INDEX turns_by_session ON turns (session_id, started_at);
CREATE INDEX turns_running ON turns (status) WHERE status = 'running';

CREATE TABLE events (
    session_id TEXT NOT NULL REFERENCES sessions (id),
    seq        INTEGER NOT NULL,
    ts         TEXT NOT NULL,
    turn_id    TEXT,
    type       TEXT NOT NULL,
    payload    TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
) STRICT;
";

/// SQLite, step 2 (gave existing sessions to `local`).
pub const SQLITE_V2: &str = "
ALTER TABLE sessions ADD COLUMN owner TEXT;
UPDATE sessions SET owner = 'local';
CREATE INDEX sessions_by_owner ON sessions (owner, created_at DESC, id DESC);
";

/// PostgreSQL, step 1 (`turns.ord` for ordering).
pub const PG_V1: &str = "
CREATE TABLE sessions (
    id         TEXT PRIMARY KEY,
    repository TEXT NOT NULL,
    mode       TEXT NOT NULL,
    model      TEXT NOT NULL,
    stop_rule  TEXT NOT NULL,
    created_at TEXT NOT NULL,
    title      TEXT,
    last_seq   BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX sessions_by_created ON sessions (created_at DESC, id DESC);
CREATE TABLE turns (
    id         TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions (id),
    status     TEXT NOT NULL,
    started_at TEXT NOT NULL,
    ended_at   TEXT,
    error      TEXT,
    ord        BIGSERIAL
);
CREATE INDEX turns_by_session ON turns (session_id, started_at);
CREATE INDEX turns_running ON turns (status) WHERE status = 'running';
CREATE TABLE events (
    session_id TEXT NOT NULL REFERENCES sessions (id),
    seq        BIGINT NOT NULL,
    ts         TEXT NOT NULL,
    turn_id    TEXT,
    type       TEXT NOT NULL,
    payload    TEXT NOT NULL,
    PRIMARY KEY (session_id, seq)
);
";

/// PostgreSQL, step 2 (no backfill).
pub const PG_V2: &str = "
ALTER TABLE sessions ADD COLUMN owner TEXT;
CREATE INDEX sessions_by_owner ON sessions (owner, created_at DESC, id DESC);
";

/// Both, step 3.
pub const RULES: &str = "
CREATE TABLE rules (
    id         TEXT PRIMARY KEY NOT NULL,
    principal  TEXT NOT NULL,
    repository TEXT,
    matches    TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX rules_by_principal ON rules (principal, created_at, id);
";
