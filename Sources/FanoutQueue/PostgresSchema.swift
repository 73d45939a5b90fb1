/// The queue's tables: created when a job first opens the queue (under an advisory lock, so that concurrent jobs
/// never race on them). A build's rows hang off its `fanout_queue_builds` row and go with it when it expires.
enum PostgresSchema {
    static let statements = [
        """
        CREATE TABLE IF NOT EXISTS fanout_queue_builds (
          build_id text PRIMARY KEY,
          fingerprint text NOT NULL,
          seeder text NOT NULL,
          requeues_left integer NOT NULL,
          next_item integer NOT NULL,
          created_at timestamptz NOT NULL DEFAULT now(),
          expires_at timestamptz NOT NULL)
        """,
        """
        CREATE TABLE IF NOT EXISTS fanout_queue_items (
          build_id text NOT NULL REFERENCES fanout_queue_builds (build_id) ON DELETE CASCADE,
          item integer NOT NULL,
          priority integer NOT NULL DEFAULT 0,
          payload text NOT NULL,
          estimate double precision NOT NULL,
          state text NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'reserved', 'done')),
          token integer NOT NULL DEFAULT 0,
          worker text,
          session text,
          lease_until timestamptz,
          first_worker text,
          avoid_worker text,
          retry_of integer,
          PRIMARY KEY (build_id, item))
        """,
        "CREATE INDEX IF NOT EXISTS fanout_queue_items_next ON fanout_queue_items (build_id, state, priority, item)",
        """
        CREATE TABLE IF NOT EXISTS fanout_queue_results (
          seq bigserial PRIMARY KEY,
          build_id text NOT NULL REFERENCES fanout_queue_builds (build_id) ON DELETE CASCADE,
          item integer NOT NULL,
          token integer NOT NULL,
          test text NOT NULL,
          failed boolean NOT NULL,
          payload text NOT NULL,
          worker text NOT NULL,
          UNIQUE (build_id, item, token, test))
        """,
        """
        CREATE TABLE IF NOT EXISTS fanout_queue_workers (
          build_id text NOT NULL REFERENCES fanout_queue_builds (build_id) ON DELETE CASCADE,
          session text NOT NULL,
          name text NOT NULL,
          last_seen timestamptz NOT NULL DEFAULT now(),
          finished boolean NOT NULL DEFAULT false,
          PRIMARY KEY (build_id, session))
        """,
        """
        CREATE TABLE IF NOT EXISTS fanout_queue_reports (
          build_id text NOT NULL REFERENCES fanout_queue_builds (build_id) ON DELETE CASCADE,
          session text NOT NULL,
          name text NOT NULL,
          report text NOT NULL,
          sent_at timestamptz NOT NULL DEFAULT now(),
          PRIMARY KEY (build_id, session))
        """,
    ]
}
