-- CHOPS: MySQL/MariaDB DDL of the agent's tables and the CPHOS pack's (utf8mb4, InnoDB): the reference a DBA
-- reads. The tables are created and upgraded by the Alembic migrations (`chops db upgrade`: chops/migrations,
-- apis/cphos/migrations), written from the metadata (chops/tables.py, apis/cphos/tables.py). A change to the
-- metadata comes with a migration and an edit here: tests/integration/test_schema.py loads this file into
-- MariaDB and proves it, the metadata and the migrations agree. Statements are separated by ";" at a line end.

-- ---- the CPHOS system (upstream names; no foreign keys: the upstream data has orphans) ----

CREATE TABLE IF NOT EXISTS cmf_tp_member (
  id          INT NOT NULL AUTO_INCREMENT,
  p_id        INT NOT NULL DEFAULT 0,            -- team leader's id when type = 3, else 0
  user_name   VARCHAR(64) NOT NULL DEFAULT '',   -- real name
  school_id   INT NOT NULL DEFAULT 0,            -- -> cmf_tp_school.id
  subject     INT NOT NULL DEFAULT 0,            -- marking subject (problem index 1-10)
  status      INT NOT NULL DEFAULT 0,            -- 0 = waiting for approval, 1 = approved
  type        INT NOT NULL DEFAULT 1,            -- 1 team leader, 2 arbiter, 3 vice team leader
  `limit`     INT NOT NULL DEFAULT 0,            -- upload limit (0-200)
  create_time INT NOT NULL DEFAULT 0,            -- unix seconds
  nickname    VARCHAR(64) COLLATE utf8mb4_bin NOT NULL DEFAULT '',  -- WeChat nickname: identifies the user (exact)
  PRIMARY KEY (id),
  KEY ix_member_nickname (nickname),
  KEY ix_member_user_name (user_name),
  KEY ix_member_school_id (school_id),
  KEY ix_member_p_id (p_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS cmf_tp_admin (
  id      INT NOT NULL AUTO_INCREMENT,
  user_id INT NOT NULL,                          -- -> cmf_tp_member.id; the only source of admin rights
  PRIMARY KEY (id),
  KEY ix_admin_user_id (user_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS cmf_tp_area (
  id        INT NOT NULL AUTO_INCREMENT,
  area_name VARCHAR(64) NOT NULL,                -- "area" in the JSON dump
  PRIMARY KEY (id),
  KEY ix_area_area_name (area_name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS cmf_tp_school (
  id          INT NOT NULL AUTO_INCREMENT,
  area        INT NOT NULL,                      -- -> cmf_tp_area.id
  school_name VARCHAR(128) NOT NULL,
  PRIMARY KEY (id),
  KEY ix_school_area (area),
  UNIQUE KEY ux_school_school_name (school_name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS cmf_tp_exam (
  id          INT NOT NULL AUTO_INCREMENT,
  title       VARCHAR(128) NOT NULL,
  status      INT NOT NULL DEFAULT 1,            -- 2 = the current exam
  type        INT NOT NULL DEFAULT 1,            -- 2 = answer sheets assigned for marking
  `show`      INT NOT NULL DEFAULT 1,
  create_time INT NOT NULL DEFAULT 0,
  PRIMARY KEY (id),
  KEY ix_exam_status (status)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS cmf_tp_student (
  id      INT NOT NULL AUTO_INCREMENT,
  user_id INT NOT NULL,                          -- member who entered the student
  name    VARCHAR(64) NOT NULL,
  school  INT NOT NULL,
  grade   VARCHAR(16) NOT NULL DEFAULT '',
  prize   VARCHAR(32) NOT NULL DEFAULT '',
  PRIMARY KEY (id),
  KEY ix_student_user_id (user_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS cmf_tp_test_paper (
  id          INT NOT NULL AUTO_INCREMENT,
  p_id        INT NOT NULL,                      -- -> cmf_tp_exam.id
  user_id     INT NOT NULL,                      -- uploading member
  student_id  INT NOT NULL,
  score       DOUBLE NULL,
  eight       DOUBLE NULL,
  two         DOUBLE NULL,
  create_time INT NOT NULL DEFAULT 0,
  PRIMARY KEY (id),
  KEY ix_test_paper_p_id (p_id),
  KEY ix_test_paper_user_id (user_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS cmf_tp_subject (
  id          INT NOT NULL AUTO_INCREMENT,
  p_id        INT NOT NULL,                      -- -> cmf_tp_test_paper.id
  subject     INT NOT NULL,                      -- problem index
  image       VARCHAR(255) NOT NULL DEFAULT '',
  grade       DOUBLE NULL,
  status      INT NOT NULL DEFAULT 1,
  create_time INT NOT NULL DEFAULT 0,
  PRIMARY KEY (id),
  KEY ix_subject_p_id (p_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS cmf_tp_correct (
  id          INT NOT NULL AUTO_INCREMENT,
  user_id     INT NOT NULL,                      -- marker -> cmf_tp_member.id
  p_id        INT NOT NULL,                      -- -> cmf_tp_subject.id
  grade       DOUBLE NULL,
  status      INT NOT NULL DEFAULT 1,            -- 1 = not yet marked
  create_time INT NOT NULL DEFAULT 0,
  PRIMARY KEY (id),
  KEY ix_correct_user_status (user_id, status),
  KEY ix_correct_p_id (p_id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- ---- the project's own tables ----

CREATE TABLE IF NOT EXISTS chops_audit_log (
  id              BIGINT NOT NULL AUTO_INCREMENT,
  created_at      DATETIME NOT NULL,
  request_id      VARCHAR(64) NULL,
  idempotency_key VARCHAR(191) COLLATE utf8mb4_bin NULL,             -- a repeat with the same key replays result_json
  nickname        VARCHAR(64) NOT NULL,          -- the acting user (from the session)
  user_id         INT NULL,
  operation       VARCHAR(64) NOT NULL,
  args_json       TEXT NOT NULL,
  outcome         VARCHAR(32) NOT NULL,
  message         TEXT NOT NULL,
  diff_json       TEXT NOT NULL,                 -- row-level before/after
  result_json     LONGTEXT NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY ux_audit_idempotency_key (idempotency_key),
  KEY ix_audit_nickname (nickname),
  KEY ix_audit_created_at (created_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS chops_conversation (
  id         VARCHAR(36) NOT NULL,               -- uuid
  nickname   VARCHAR(64) NOT NULL,
  created_at DATETIME NOT NULL,
  updated_at DATETIME NOT NULL,
  channel    VARCHAR(16) NOT NULL DEFAULT 'widget',  -- widget / cli / eval
  PRIMARY KEY (id),
  KEY ix_conversation_nickname (nickname),
  KEY ix_conversation_updated_at (updated_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS chops_turn (
  id              INT NOT NULL AUTO_INCREMENT,
  conversation_id VARCHAR(36) NOT NULL,
  seq             INT NOT NULL,
  created_at      DATETIME NOT NULL,
  user_text       TEXT NOT NULL,
  reply           TEXT NULL,
  route           VARCHAR(32) NULL,
  operation       VARCHAR(64) NULL,
  args_json       TEXT NULL,
  outcome         VARCHAR(32) NULL,
  committed       TINYINT(1) NOT NULL DEFAULT 0,
  queued          TINYINT(1) NOT NULL DEFAULT 0,
  trace_json      LONGTEXT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY ux_turn_conversation_seq (conversation_id, seq),
  CONSTRAINT fk_turn_conversation FOREIGN KEY (conversation_id) REFERENCES chops_conversation (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS chops_approval (
  id              INT NOT NULL AUTO_INCREMENT,
  created_at      DATETIME NOT NULL,
  decided_at      DATETIME NULL,
  conversation_id VARCHAR(36) NULL,
  turn_id         INT NULL,
  nickname        VARCHAR(64) NOT NULL,
  operation       VARCHAR(64) NOT NULL,
  args_json       TEXT NOT NULL,
  idempotency_key VARCHAR(191) COLLATE utf8mb4_bin NOT NULL,
  dry_run_json    LONGTEXT NULL,
  status          VARCHAR(16) NOT NULL DEFAULT 'pending',  -- pending / approved / rejected / failed
  decided_by      VARCHAR(64) NULL,
  note            TEXT NULL,
  result_json     LONGTEXT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY ux_approval_idempotency_key (idempotency_key),
  KEY ix_approval_status (status)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS chops_approval_step (  -- the further steps (2, 3, ...) of a queued plan
  id          INT NOT NULL AUTO_INCREMENT,
  approval_id INT NOT NULL,                      -- -> chops_approval.id (step 1 is that row's operation and args)
  position    INT NOT NULL,                      -- 2, 3, ...: the order the steps commit in
  operation   VARCHAR(64) NOT NULL,
  args_json   TEXT NOT NULL,
  PRIMARY KEY (id),
  UNIQUE KEY ux_approval_step_position (approval_id, position)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS chops_operation_policy (
  operation             VARCHAR(64) NOT NULL,
  always_needs_approval TINYINT(1) NOT NULL DEFAULT 0,
  updated_at            DATETIME NULL,
  PRIMARY KEY (operation)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- The support desk: a conversation's current state (agent / waiting / staff / closed) and one ordered
-- event log per conversation (kind: turn / user / staff / state). Event ids are global and increasing.
CREATE TABLE IF NOT EXISTS chops_conversation_state (
  conversation_id VARCHAR(36) NOT NULL,
  state           VARCHAR(16) NOT NULL DEFAULT 'agent',
  staff           VARCHAR(64) NULL,
  changed_by      VARCHAR(64) NOT NULL,
  changed_at      DATETIME NOT NULL,
  PRIMARY KEY (conversation_id),
  KEY ix_conversation_state_state (state, changed_at),
  CONSTRAINT fk_state_conversation FOREIGN KEY (conversation_id) REFERENCES chops_conversation (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

CREATE TABLE IF NOT EXISTS chops_conversation_event (
  id              BIGINT NOT NULL AUTO_INCREMENT,
  conversation_id VARCHAR(36) NOT NULL,
  created_at      DATETIME NOT NULL,
  kind            VARCHAR(16) NOT NULL,
  actor           VARCHAR(64) NOT NULL,
  turn_id         INT NULL,
  body_json       LONGTEXT NULL,
  PRIMARY KEY (id),
  KEY ix_event_conversation (conversation_id, id),
  KEY ix_event_created_at (created_at),
  CONSTRAINT fk_event_conversation FOREIGN KEY (conversation_id) REFERENCES chops_conversation (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Named staff accounts: the console signs in with name + password (a werkzeug.security scrypt hash).
CREATE TABLE IF NOT EXISTS chops_staff_account (
  name          VARCHAR(64) COLLATE utf8mb4_bin NOT NULL,
  display_name  VARCHAR(128) NOT NULL,
  password_hash VARCHAR(255) NOT NULL,
  created_at    DATETIME NOT NULL,
  disabled      TINYINT(1) NOT NULL DEFAULT 0,
  PRIMARY KEY (name)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- The staff member who committed an audited write for a user (the console's operation page, or an
-- approval); the user is the audit row's nickname. No row: the user's own request.
CREATE TABLE IF NOT EXISTS chops_audit_actor (
  audit_id BIGINT NOT NULL,
  actor    VARCHAR(64) NOT NULL,
  PRIMARY KEY (audit_id),
  KEY ix_audit_actor_actor (actor),
  CONSTRAINT fk_audit_actor_audit FOREIGN KEY (audit_id) REFERENCES chops_audit_log (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;


-- A user's rating of one agent answer (thumbs up / down, an optional comment); re-rating replaces it.
CREATE TABLE IF NOT EXISTS chops_turn_rating (
  turn_id  INT NOT NULL,
  thumbs   VARCHAR(8) NOT NULL,                  -- up / down
  comment  TEXT NULL,                            -- at most 1000 characters
  rated_at DATETIME NOT NULL,
  PRIMARY KEY (turn_id),
  KEY ix_rating_rated_at (rated_at),
  CONSTRAINT fk_rating_turn FOREIGN KEY (turn_id) REFERENCES chops_turn (id)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- When each staff member was last active (authenticated staff requests): with nobody active recently,
-- a user handed over to a person is told that someone will answer later.
CREATE TABLE IF NOT EXISTS chops_staff_presence (
  name         VARCHAR(64) COLLATE utf8mb4_bin NOT NULL,
  last_seen_at DATETIME NOT NULL,
  PRIMARY KEY (name),
  KEY ix_staff_presence_seen (last_seen_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- EcoAssistant's solution memory: one verified solution per row, shown to similar later requests.
-- A read's result data and a profile answer are never stored (route and operation only).
CREATE TABLE IF NOT EXISTS chops_solution (
  id          INT NOT NULL AUTO_INCREMENT,
  created_at  DATETIME NOT NULL,
  request     TEXT NOT NULL,                     -- the user's message
  route       VARCHAR(32) NOT NULL,              -- basic_info / guide / system
  operation   VARCHAR(64) NULL,
  args_json   TEXT NULL,                         -- a committed write's arguments only
  answer      TEXT NULL,                         -- a guide answer only
  source      VARCHAR(255) NULL,                 -- the guide file and page it cites
  fingerprint VARCHAR(64) NOT NULL,              -- sha256 of the solution: stored once, a deleted one never again
  embedder    VARCHAR(128) NOT NULL,             -- vectors of different embedders are never compared
  embedding   BLOB NOT NULL,                     -- float32, unit length
  status      VARCHAR(16) NOT NULL DEFAULT 'live',  -- live / deleted
  deleted_at  DATETIME NULL,
  deleted_by  VARCHAR(64) NULL,
  PRIMARY KEY (id),
  UNIQUE KEY ux_solution_fingerprint (fingerprint),
  KEY ix_solution_status (status)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Admission control: one row per turn waiting for, or running on, the model (chops.admission).
CREATE TABLE IF NOT EXISTS chops_admission_ticket (
  id              INT NOT NULL AUTO_INCREMENT,
  conversation_id VARCHAR(64) NOT NULL,
  created_at      DATETIME NOT NULL,
  admitted_at     DATETIME NULL,
  expires_at      DATETIME NOT NULL,
  PRIMARY KEY (id),
  KEY ix_admission_expires (expires_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Staff sign-in attempts that failed or were throttled (chops.web.signin).
CREATE TABLE IF NOT EXISTS chops_signin_attempt (
  id       INT NOT NULL AUTO_INCREMENT,
  at       DATETIME NOT NULL,
  account  VARCHAR(64) NOT NULL,
  address  VARCHAR(64) NOT NULL,
  outcome  VARCHAR(16) NOT NULL,
  PRIMARY KEY (id),
  KEY ix_signin_attempt_at (at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;

-- Changes described to the user and waiting for their "yes" (chops.pending).
CREATE TABLE IF NOT EXISTS chops_pending_change (
  id              INT NOT NULL AUTO_INCREMENT,
  conversation_id VARCHAR(36) NOT NULL,
  nickname        VARCHAR(64) NOT NULL,
  created_at      DATETIME NOT NULL,
  expires_at      DATETIME NOT NULL,
  idempotency_key VARCHAR(191) COLLATE utf8mb4_bin NOT NULL,  -- the commit's key: a resent "yes" replays, never writes twice
  steps_json      TEXT NOT NULL,                    -- the exact plan: [[operation, args], ...]
  diff_json       LONGTEXT NOT NULL,                -- the dry run's changes it was described from
  description     TEXT NOT NULL,
  state           VARCHAR(16) NOT NULL DEFAULT 'open',  -- open / committed / declined / dropped / lapsed / refused / superseded
  resolved_at     DATETIME NULL,
  PRIMARY KEY (id),
  KEY ix_pending_conversation_state (conversation_id, state)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci;
