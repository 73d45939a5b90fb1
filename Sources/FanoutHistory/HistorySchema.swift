import GRDB

/// The tables of the history database, built by named migrations.
///
/// Never edit a migration that has shipped: add the next one so existing history files upgrade in place. A
/// migration's name is its identity in every file it ran on: give each a name of its own (a version and what it
/// does), so that two added on separate branches both run after a merge instead of colliding. Columns use snake_case so the file reads well in the `sqlite3` shell.
enum HistorySchema {
    /// The schema version a store opened by this build of Fanout has: the number of registered migrations.
    static var currentVersion: Int { migrator.migrations.count }

    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1", migrate: createV1)
        migrator.registerMigration("v2 measurement hardware class and baseline", migrate: addMeasurementContext)
        migrator.registerMigration("v3 cpu and memory of units, classes and attempts", migrate: addResourceUsage)
        migrator.registerMigration("v4 product of runs", migrate: addProduct)
        migrator.registerMigration("v5 test target verdicts for selective testing", migrate: addTargetRuns)
        migrator.registerMigration("v6 order of tests in their process", migrate: addTestOrder)
        return migrator
    }

    /// Children reference `runs` by its integer key with ON DELETE CASCADE: recording a run again deletes its run
    /// row and lets SQLite remove everything that hung from it, and pruning old runs is one statement.
    /// Per-test rows are the bulk of the file (tests × runs), so they name tests by an integer key into `tests` and
    /// are clustered by run (WITHOUT ROWID) with no other index: every query reaches them through recent runs.
    /// That keeps them near 60 bytes per test and run.
    private static func createV1(_ db: Database) throws {
        try db.create(table: "runs") { t in
            t.primaryKey("id", .integer)
            t.column("run_id", .text).notNull().unique()
            t.column("started_at", .datetime).notNull()
            t.column("finished_at", .datetime).notNull()
            t.column("fanout_version", .text).notNull()
            t.column("exit_code", .integer).notNull()
            t.column("interrupted", .boolean).notNull()
            t.column("destinations", .text).notNull()  // JSON array of destination names
            t.column("slots", .integer).notNull()
            t.column("wall", .double)
            t.column("preparation", .double)
            t.column("makespan", .double)
            t.column("lower_bound", .double)
            t.column("predicted_makespan", .double)
            t.column("planned_lower_bound", .double)
            t.column("total_estimate", .double)
            // Final outcome counts, as the report computed them: `history show` lists runs without scanning results.
            t.column("total", .integer).notNull()
            t.column("passed", .integer).notNull()
            t.column("flaky", .integer).notNull()
            t.column("failed", .integer).notNull()
            t.column("skipped", .integer).notNull()
            t.column("crashed", .integer).notNull()
            t.column("timed_out", .integer).notNull()
            t.column("not_run", .integer).notNull()
        }
        try db.create(index: "runs_by_start", on: "runs", columns: ["started_at"])

        try db.create(table: "unit_runs") { t in
            t.primaryKey {
                t.column("run", .integer).references("runs", onDelete: .cascade)
                t.column("unit_id", .integer)
            }
            t.column("destination", .text).notNull()
            t.column("framework", .text).notNull()
            t.column("agent", .text).notNull()
            t.column("slot", .integer).notNull()
            t.column("suites", .text).notNull()  // JSON array of `Module.Class`
            t.column("test_count", .integer).notNull()
            t.column("estimate", .double)
            t.column("started_at", .double)  // seconds since the run started
            t.column("duration", .double)
            t.column("ending", .text).notNull()
        }

        // Doubles may be NaN, which SQLite stores as NULL: REAL columns stay nullable so one odd value can never make
        // a whole run fail to record. Queries skip NULL times.
        try db.create(table: "class_runs") { t in
            t.column("run", .integer).notNull().references("runs", onDelete: .cascade)
            t.column("destination", .text).notNull()
            t.column("framework", .text).notNull()
            t.column("module", .text).notNull()
            t.column("suite", .text).notNull()
            t.column("test_count", .integer).notNull()
            t.column("estimate", .double)
            t.column("estimate_source", .text).notNull()
            t.column("actual", .double)
            t.column("outcome", .text).notNull()
            t.column("timing_complete", .boolean).notNull()
            t.column("agent", .text)
        }
        try db.create(index: "class_runs_by_run", on: "class_runs", columns: ["run"])
        try db.create(index: "class_runs_by_class", on: "class_runs", columns: ["destination", "module", "suite"])

        try db.create(table: "tests") { t in
            t.primaryKey("id", .integer)
            t.column("module", .text).notNull()
            t.column("suite", .text).notNull()
            t.column("name", .text).notNull()
            t.uniqueKey(["module", "suite", "name"])
        }

        // One row per test and destination: the final outcome (a flaky test is one row here, two attempts below).
        try db.create(table: "test_results", options: .withoutRowID) { t in
            t.primaryKey {
                t.column("run", .integer).references("runs", onDelete: .cascade)
                t.column("destination", .text)
                t.column("test", .integer).references("tests")
            }
            t.column("framework", .text).notNull()
            t.column("outcome", .text).notNull()
            t.column("attempt_count", .integer).notNull()
        }

        // One row per attempt, `attempt` counting from 0 in the order the report lists them.
        try db.create(table: "test_attempts", options: .withoutRowID) { t in
            t.primaryKey {
                t.column("run", .integer).references("runs", onDelete: .cascade)
                t.column("destination", .text)
                t.column("test", .integer).references("tests")
                t.column("attempt", .integer)
            }
            t.column("outcome", .text).notNull()
            t.column("duration", .double)
            t.column("agent", .text).notNull()
            t.column("unit", .integer).notNull()
            // The first failing issue: enough to tell flakes apart later without keeping whole logs.
            t.column("failure", .text)
        }

        try db.create(table: "measurements") { t in
            t.column("run", .integer).notNull().references("runs", onDelete: .cascade)
            t.column("destination", .text).notNull()
            t.column("agent", .text).notNull()
            t.column("module", .text).notNull()
            t.column("suite", .text).notNull()
            t.column("name", .text).notNull()
            t.column("metric", .text).notNull()
            t.column("unit", .text).notNull()
            t.column("identifier", .text).notNull()
            t.column("samples", .text).notNull()  // JSON array of the measured values
            t.column("average", .double)
            t.column("rsd", .double)
            t.column("max_rsd", .double)
            t.column("max_std", .double)
        }
        try db.create(index: "measurements_by_run", on: "measurements", columns: ["run"])
        try db.create(
            index: "measurements_by_test", on: "measurements", columns: ["destination", "module", "suite", "name"])
    }

    /// What a performance trend needs of a past measurement: the agent's hardware class (a trend compares like
    /// with like, as baselines do; the empty string is "could not be read", NULL a row recorded before this
    /// migration, which no trend uses) and the baseline average it was judged against, when it had one.
    private static func addMeasurementContext(_ db: Database) throws {
        try db.alter(table: "measurements") { t in
            t.add(column: "hardware_class", .text)
            t.add(column: "baseline", .double)
        }
    }

    /// What the run's processes consumed, for scheduling by CPU and memory (``TimingHistory/cpuShare``,
    /// ``TimingHistory/peakMemory``) and for telling a CPU-starved test from a hung one. NULL: not measured (the agent
    /// could not tell, or a row recorded before this migration).
    ///
    /// Per-test rows are the bulk of the file, so an attempt keeps its CPU time as whole milliseconds in an INTEGER
    /// (0 to 3 bytes for any attempt under two hours of CPU) rather than an 8-byte REAL: the sampled value is no finer.
    private static func addResourceUsage(_ db: Database) throws {
        try db.alter(table: "unit_runs") { t in
            t.add(column: "cpu_seconds", .double)
            t.add(column: "peak_memory", .integer)  // bytes, the largest process of the unit
            t.add(column: "cores", .integer)  // online CPUs of the agent's machine
        }
        try db.alter(table: "class_runs") { t in
            t.add(column: "cpu_seconds", .double)
        }
        try db.alter(table: "test_attempts") { t in
            t.add(column: "cpu_ms", .integer)
        }
    }

    /// The SHA-256 of the test product each run ran (NULL: unknown, or a run recorded before this migration), so
    /// that two runs of one build that gave a test both verdicts count as evidence of a flake.
    private static func addProduct(_ db: Database) throws {
        try db.alter(table: "runs") { t in
            t.add(column: "product", .text)
        }
    }

    /// What each run did with each test target under `--selective` (``TargetRun``): its inputs' digest and whether it
    /// fully passed. Keyed by the run's id, not by a row of `runs`: an interrupted run is not recorded for timing,
    /// but its "interrupted" verdict must be kept, or the next run could skip a target on the pass before it.
    private static func addTargetRuns(_ db: Database) throws {
        try db.create(table: "target_runs") { t in
            t.autoIncrementedPrimaryKey("id")
            t.column("run_id", .text).notNull()
            t.column("destination", .text).notNull()
            t.column("target", .text).notNull()
            t.column("fingerprint", .text).notNull()
            t.column("parts", .text).notNull()  // JSON object: input name → digest
            t.column("verdict", .text).notNull()
            t.column("reason", .text)
            t.column("commit_id", .text)
            t.column("recorded_at", .datetime).notNull()
            t.uniqueKey(["run_id", "destination", "target"])
        }
        try db.create(index: "target_runs_by_target", on: "target_runs", columns: ["destination", "target", "recorded_at"])
    }

    /// The order tests ran in their process (`fanout bisect`, order checks): each attempt's position in its unit
    /// (1-based; the attempts of the same run, destination and unit with a lower position ran before it there), and
    /// whether the unit ran tests at the same time. An INTEGER of 1 or 2 bytes per attempt: the order costs no list of
    /// names. `replay_of`: an order check's attempt, the unit whose order it replayed. `order_dependent` on a result:
    /// see below.
    private static func addTestOrder(_ db: Database) throws {
        try db.alter(table: "test_attempts") { t in
            t.add(column: "position", .integer)
            t.add(column: "replay_of", .integer)
        }
        try db.alter(table: "unit_runs") { t in
            t.add(column: "concurrent", .boolean)
        }
        // An order-dependent result: its polluters (`Module.Class/test`, one per line; "" when not narrowed down).
        // Its attempts are no evidence of a flake (``HistoryStore/flakyTests(runs:)``).
        try db.alter(table: "test_results") { t in
            t.add(column: "order_dependent", .text)
        }
    }
}
