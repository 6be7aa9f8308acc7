-- reports/schema.sql: the schema of the results database (docs/database.md).
--
-- Compiled into the program (tools/embed.sh) and run by the store
-- (reports/store_schema.c), section by section. A section starts at a line
-- "-- @NAME" and runs to the next such line:
--
--   @base    the tables of schema version 1 (a new file starts here)
--   @vN      what version N adds to version N - 1 (a migration); a new file
--            runs @base then @v2 ... @vN up to STORE_SCHEMA_VERSION
--            (reports/store.h), an older file the sections after its version
--   @sweeps  the sweep tables, created when a sweep first writes to the file
--
-- Migrations are additive only: new tables and columns, never a changed one,
-- so a reader of version 3 or later reads a newer file's older columns as
-- they are (STORE_READ_OLDEST). Never edit a section that has shipped: the
-- text of each CREATE statement (comments inside it included) is what
-- SQLite keeps in the file and what `sqlite3 FILE .schema` prints. Add a
-- section instead (docs/database.md, "Adding a column").
--
-- Times are in simulated seconds from the start of the run unless the name
-- starts with wall (wall-clock). NULL = not known or not happened (a JSON
-- null).

-- @base
-- One row per `clustertwin run` (or sweep replica). Inserted 'incomplete'
-- before the simulation starts; the figures are filled and status set to
-- 'complete' in the run's last transaction. From `nodes` on, the columns are
-- cluster.* of the JSON results; from `cost_owned` on, cluster.cost.*
-- (models/cost.h): the parts of cost_usd and energy.
CREATE TABLE runs (
  id INTEGER PRIMARY KEY,
  status TEXT NOT NULL CHECK (status IN ('incomplete', 'complete')),
  scenario TEXT NOT NULL,              -- <scenario name>
  scenario_file TEXT NOT NULL,         -- the path given to run
  scenario_xml TEXT NOT NULL,          -- the scenario file's text
  seed INTEGER NOT NULL,
  version TEXT NOT NULL,               -- clustertwin version
  wall_started_at TEXT NOT NULL,       -- UTC, ISO 8601
  wall_s REAL,                         -- wall-clock seconds of the simulation
  simulated_s REAL,
  events INTEGER,                      -- engine events dispatched
  failures_total INTEGER,
  nodes INTEGER,
  gpus INTEGER,
  gpu_utilization REAL,                -- allocated: GPU-time held by work / provisioned GPU-time
  gpu_hours REAL,                      -- provisioned
  gpu_busy_hours REAL,
  cost_usd REAL,
  energy_kwh REAL,                     -- NULL without an energy model
  co2_kg REAL,                         -- NULL without an energy model
  cost_owned INTEGER, cost_compute_usd REAL, cost_storage_usd REAL, cost_cloud_usd REAL,
  cost_electricity_usd REAL, cost_cloud_gpu_hours REAL, cost_storage_tb_months REAL,
  cost_gpu_kwh REAL, cost_overhead_kwh REAL, cost_it_kwh REAL, cost_avg_it_power_kw REAL,
  cost_avg_power_kw REAL, cost_pue REAL, cost_carbon_kg_per_kwh REAL,
  cost_electricity_usd_per_kwh REAL,
  gpu_hours_by_state_training REAL,
  gpu_hours_by_state_checkpoint REAL,
  gpu_hours_by_state_restarting REAL,
  gpu_hours_by_state_batch REAL,
  gpu_hours_by_state_idle REAL,
  nodes_drained INTEGER,
  cluster_extra TEXT,                  -- JSON: cluster fields without a column
  series_bucket_s REAL,                -- grid of this run's time series
  results_json TEXT                    -- the whole `run --json` document
);

-- jobs[] of the JSON results, one row each, in the same order. From
-- `step_time_s` on, training jobs only (NULL for batch jobs).
CREATE TABLE jobs (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL,                -- position in jobs[]
  name TEXT NOT NULL, kind TEXT NOT NULL, gpus INTEGER, queue TEXT, state TEXT,
  preemptions INTEGER, submit_s REAL, start_s REAL, end_s REAL, queue_wait_s REAL,
  step_time_s REAL, steps_total INTEGER, steps_done INTEGER, tokens_done REAL,
  model_tflops_per_gpu REAL, hardware_tflops_per_gpu REAL, mfu REAL,
  tokens_per_s_per_gpu REAL, params REAL, micro_batches INTEGER,
  breakdown_compute_s REAL, breakdown_tp_comm_s REAL, breakdown_pp_bubble_s REAL,
  breakdown_dp_comm_s REAL, breakdown_optimizer_s REAL, breakdown_other_s REAL,
  interruptions INTEGER, planned_interruptions INTEGER, lost_work_s REAL,
  checkpoint_size_bytes REAL, checkpoint_write_s REAL, checkpoint_stall_s REAL,
  checkpoint_interval_s REAL, checkpoints INTEGER, shrinks INTEGER,
  ettr REAL,                           -- training kept / elapsed since first start
  time_elapsed_s REAL, time_training_kept_s REAL, time_redone_s REAL,
  time_checkpoint_stall_s REAL, time_restart_s REAL, time_waiting_for_nodes_s REAL,
  memory_per_gpu_weights_bytes REAL, memory_per_gpu_grads_bytes REAL,
  memory_per_gpu_optimizer_bytes REAL, memory_per_gpu_activations_bytes REAL,
  memory_per_gpu_other_bytes REAL, memory_per_gpu_total_bytes REAL,
  extra TEXT,                          -- JSON: job fields without a column
  PRIMARY KEY (run_id, idx)
);
CREATE INDEX jobs_name ON jobs(run_id, name);

-- queues[] of the JSON results (the scheduler's queues).
CREATE TABLE queues (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL,
  name TEXT NOT NULL, quota_gpus INTEGER, jobs INTEGER, started INTEGER, waiting INTEGER,
  gpu_hours REAL, quota_share REAL, mean_wait_s REAL, p95_wait_s REAL, slowdown REAL,
  extra TEXT,
  PRIMARY KEY (run_id, idx)
);

-- services[] of the JSON results (inference).
CREATE TABLE services (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL,
  name TEXT NOT NULL, requests INTEGER, replicas INTEGER, output_tokens_per_s REAL,
  ttft_p50_s REAL, ttft_p99_s REAL, tpot_p50_s REAL, tpot_p99_s REAL,
  e2e_p99_s REAL, slo_attainment REAL,
  extra TEXT,
  PRIMARY KEY (run_id, idx)
);

-- Failures by kind (a <failure> element or a profile's cause).
CREATE TABLE failure_kinds (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL,
  component TEXT NOT NULL, cause TEXT NOT NULL, count INTEGER NOT NULL,
  PRIMARY KEY (run_id, idx)
);

-- Every event published on the metric bus (sim/world.h lists the kinds):
-- failures, repairs, restarts, checkpoints, job starts/ends.
CREATE TABLE events (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  seq INTEGER NOT NULL,                -- publishing order
  t_s REAL NOT NULL,
  entity TEXT NOT NULL,                -- a job name or 'cluster'
  kind TEXT NOT NULL,
  node INTEGER,                        -- from a detail reading 'node N...'
  detail TEXT NOT NULL,
  PRIMARY KEY (run_id, seq)
) WITHOUT ROWID;

-- Time series: one row per (run, entity, name); points are buckets
-- [t_s, t_s + dt_s) of a power-of-two width (runs.series_bucket_s), at most
-- 2000 per series (STORE_MAX_POINTS), with the time-weighted mean and the
-- least and greatest value held in the bucket. Series: cluster gpus_training,
-- gpus_checkpoint, gpus_restarting, gpus_batch, gpus_serving, gpus_failed,
-- gpus_idle (cluster GPUs minus the five busy states), queue_length,
-- cost_usd (so far; max = the value at the bucket's end); <job> progress (0..1).
CREATE TABLE series (
  id INTEGER PRIMARY KEY,
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  entity TEXT NOT NULL, name TEXT NOT NULL,
  UNIQUE (run_id, entity, name)
);
CREATE TABLE points (
  series_id INTEGER NOT NULL REFERENCES series(id) ON DELETE CASCADE,
  k INTEGER NOT NULL,                  -- bucket number: t_s = k * bucket width
  t_s REAL NOT NULL, dt_s REAL NOT NULL,
  mean REAL NOT NULL, min REAL NOT NULL, max REAL NOT NULL,
  PRIMARY KEY (series_id, k)
) WITHOUT ROWID;

-- Views for the events and series people query most.
CREATE VIEW failure_events AS SELECT * FROM events WHERE kind IN
  ('failure', 'node_repaired', 'node_drained', 'node_replaced', 'job_down',
   'job_restart', 'job_waiting', 'job_shrink');
CREATE VIEW checkpoint_events AS SELECT * FROM events WHERE kind IN
  ('checkpoint_start', 'checkpoint_end');
CREATE VIEW cluster_series AS SELECT s.run_id, s.name, p.t_s, p.dt_s, p.mean, p.min, p.max
  FROM series s JOIN points p ON p.series_id = s.id WHERE s.entity = 'cluster';

-- @v2
-- The microbenchmark cases of a run (the JSON's microbenchmarks[], predicted
-- and measured) and where they were measured (the JSON's hardware object).
CREATE TABLE microbenchmarks (
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  idx INTEGER NOT NULL,                -- position in microbenchmarks[]
  op TEXT NOT NULL,                    -- allreduce ... sendrecv | gemm | copy | storage-write
  ranks INTEGER, size_bytes REAL, m INTEGER, n INTEGER, k INTEGER, precision TEXT,
  kind TEXT,                           -- copies: d2d | h2d | d2h | host
  files INTEGER,
  predicted_s REAL, predicted_busbw_GBps REAL, predicted_algbw_GBps REAL, predicted_GBps REAL,
  predicted_tflops REAL, model TEXT,
  measured_s REAL,                     -- per operation, by hardware.statistic; NULL = not measured
  measured_busbw_GBps REAL, measured_algbw_GBps REAL, measured_GBps REAL, measured_tflops REAL,
  error_pct REAL,                      -- 100 (predicted - measured) / measured
  measured_min_s REAL, measured_q1_s REAL, measured_q3_s REAL, measured_max_s REAL,
  warmup INTEGER, reps INTEGER, iters INTEGER,
  measured_read_s REAL, measured_read_GBps REAL,   -- storage: reading the files back
  note TEXT,                           -- why a case was not measured or priced
  extra TEXT,
  PRIMARY KEY (run_id, idx)
);

CREATE TABLE hardware (                -- the JSON's hardware object (run --backend)
  run_id INTEGER PRIMARY KEY REFERENCES runs(id) ON DELETE CASCADE,
  backend TEXT, host TEXT, cpu TEXT, devices TEXT, libraries TEXT, ranks INTEGER,
  profile TEXT, profile_source TEXT
);

-- @v3
-- What measured_s is (the hardware's statistic: the fastest repetition or
-- the median), the median beside it, and the cpu backend's measured core peak.
ALTER TABLE microbenchmarks ADD COLUMN measured_median_s REAL;
ALTER TABLE hardware ADD COLUMN statistic TEXT;   -- measured_s is: 'min' | 'median'
ALTER TABLE hardware ADD COLUMN peak_fp64_flops REAL;   -- cpu: one core's FMA peak, measured
ALTER TABLE hardware ADD COLUMN peak_fp32_flops REAL;

-- @v4
-- Part 1: utilisation by allocation and by work kept, named apart
-- (gpu_utilization stays, meaning allocation), and training work lost to
-- failures and to preemption as separate columns (lost_work_s and
-- time_redone_s stay, the sum of the two).
ALTER TABLE runs ADD COLUMN gpu_utilization_allocated REAL;   -- = gpu_utilization: GPUs held / provisioned
ALTER TABLE runs ADD COLUMN gpu_utilization_productive REAL;  -- work kept / provisioned GPU-time
ALTER TABLE runs ADD COLUMN gpu_productive_hours REAL;
ALTER TABLE jobs ADD COLUMN lost_work_after_failures_s REAL;
ALTER TABLE jobs ADD COLUMN lost_work_after_preemption_s REAL;
ALTER TABLE jobs ADD COLUMN time_redone_after_failures_s REAL;
ALTER TABLE jobs ADD COLUMN time_redone_after_preemption_s REAL;
-- Part 2: the GPU-hours held by inference replicas (the JSON's
-- cluster.gpu_hours_by_state.serving; idle is the GPUs minus all five busy
-- states), a service's SLO goodput (services[].goodput_requests_per_s:
-- requests per second that met every latency objective) and a job's own
-- GPU-hours and their cost (jobs[].gpu_hours, jobs[].cost_usd; the cluster's
-- cost is runs.cost_usd). Columns only, so a version 3 file is read as it is
-- (STORE_READ_OLDEST): its readers take the missing columns as not known.
ALTER TABLE runs ADD COLUMN gpu_hours_by_state_serving REAL;
ALTER TABLE services ADD COLUMN goodput_requests_per_s REAL;   -- requests/s that met the SLO
ALTER TABLE jobs ADD COLUMN gpu_hours REAL;        -- the GPUs the job held, integrated
ALTER TABLE jobs ADD COLUMN cost_usd REAL;         -- gpu_hours at its node type's price

-- @v5
-- A grouped GEMM case (the JSON's microbenchmarks[].groups): that many
-- m x n x k GEMMs in one batched call, as a mixture-of-experts layer runs its
-- experts. NULL for a single GEMM and for every other case. A column only,
-- so a version 3 or 4 file is read as it is: its cases are single GEMMs.
ALTER TABLE microbenchmarks ADD COLUMN groups INTEGER;

-- @sweeps
-- Not versioned: created with IF NOT EXISTS when a sweep first writes (a
-- database without sweeps stays as it was, and older readers ignore them).
--   sweeps        one row per (scenario text, varied paths, fixed overrides):
--                 rerunning the same sweep, or one with more values or
--                 replicas, finds it and adds to it
--   sweep_points  one row per point: its values as written (a JSON array,
--                 the key) and in SI units (JSON array, null for words)
--   sweep_runs    (sweep, point, replica) -> seed and runs.id: a replica is
--                 done when its row exists (written with the run in one
--                 transaction), which is what a resumed sweep skips
--   sweep_unfit   one row per point that does not fit (its world cannot be
--                 built) and why; such a point has no runs
--   sweep_stats   per (point, metric, statistic): the estimate over the
--                 replicas and its confidence interval (models/confidence.h),
--                 written when a sweep or plan ends; derived data, replaced
CREATE TABLE IF NOT EXISTS sweeps (
  id INTEGER PRIMARY KEY,
  scenario TEXT NOT NULL,              -- <scenario name>
  scenario_file TEXT NOT NULL,         -- the path given to sweep
  scenario_xml TEXT NOT NULL,          -- the file's text, before overrides
  params TEXT NOT NULL,                -- JSON array: the varied paths, in grid order
  sets TEXT NOT NULL,                  -- JSON array: fixed overrides "path=value"
  replicas INTEGER NOT NULL,           -- replicas asked for (the most so far)
  created_at TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS sweep_points (
  sweep_id INTEGER NOT NULL REFERENCES sweeps(id) ON DELETE CASCADE,
  key TEXT NOT NULL,                   -- JSON array: the values as written
  x TEXT NOT NULL,                     -- JSON array: the values in SI units, null for words
  PRIMARY KEY (sweep_id, key)
);
CREATE TABLE IF NOT EXISTS sweep_runs (
  sweep_id INTEGER NOT NULL,
  point_key TEXT NOT NULL,
  replica INTEGER NOT NULL,            -- 0, 1, ...
  seed INTEGER NOT NULL,               -- derived from the scenario's seed and the replica
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
  PRIMARY KEY (sweep_id, point_key, replica),
  FOREIGN KEY (sweep_id, point_key) REFERENCES sweep_points(sweep_id, key) ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS sweep_unfit (
  sweep_id INTEGER NOT NULL,
  point_key TEXT NOT NULL,
  reason TEXT NOT NULL,                -- why its world cannot be built (memory, GPUs)
  PRIMARY KEY (sweep_id, point_key),
  FOREIGN KEY (sweep_id, point_key) REFERENCES sweep_points(sweep_id, key) ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS sweep_stats (
  sweep_id INTEGER NOT NULL,
  point_key TEXT NOT NULL,
  metric TEXT NOT NULL,                -- a metric path: jobs[pretrain].end_s
  statistic TEXT NOT NULL,             -- mean, or the quantile a goal uses: p90
  runs INTEGER NOT NULL,               -- replicas it is computed from
  missing INTEGER NOT NULL,            -- of which without a value
  value REAL,                          -- the estimate (null: none)
  ci_low REAL,                         -- its confidence interval (null: that end does not
  ci_high REAL,                        --   exist with so few runs, or no interval)
  ci_level REAL NOT NULL,              -- two-sided level: 0.95
  PRIMARY KEY (sweep_id, point_key, metric, statistic),
  FOREIGN KEY (sweep_id, point_key) REFERENCES sweep_points(sweep_id, key) ON DELETE CASCADE
);
