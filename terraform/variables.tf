variable "project_id" {
  description = "Google Cloud project to deploy into."
  type        = string
}

variable "region" {
  description = "Region of the functions, the scheduler job and the source bucket."
  type        = string
  default     = "europe-west1"
}

variable "firestore_location" {
  description = "Firestore location (a region such as europe-west1, or a multi-region such as eur3 or nam5). Cannot change later."
  type        = string
  default     = "europe-west1"
}

variable "name_prefix" {
  description = "Prefix of every resource name (functions, service accounts, buckets, load balancer)."
  type        = string
  default     = "sluice"
}

variable "domain" {
  description = "Host name of the API; required in production. Empty: <load balancer IP>.sslip.io, for trials only (a third party's DNS answers for that name)."
  type        = string
  default     = ""
}

variable "build_dir" {
  description = "Where `npm run build` wrote the archives."
  type        = string
  default     = "../dist/functions"
}

variable "function_memory" {
  description = "Memory of each API function."
  type        = string
  default     = "512Mi"
}

variable "function_cpu" {
  description = "vCPUs of each function (1 or more lets one instance serve concurrent requests)."
  type        = string
  default     = "1"
}

variable "function_concurrency" {
  description = "Concurrent requests one API function instance serves."
  type        = number
  default     = 40
}

variable "function_max_instances" {
  description = "Upper bound of instances per API function (bounds the bill and Firestore load)."
  type        = number
  default     = 20
}

variable "function_min_instances" {
  description = "Warm instances per API function (0: pay nothing when idle, accept cold starts)."
  type        = number
  default     = 0
}

variable "scheduled_memory" {
  description = "Memory of the scheduled runner (it parses job inputs such as parquet files)."
  type        = string
  default     = "1Gi"
}

variable "scheduled_timeout_seconds" {
  description = "How long one tick of the scheduled runner may take."
  type        = number
  default     = 540
}

variable "schedule" {
  description = "Cron schedule of the scheduled runner (Cloud Scheduler's finest is every minute)."
  type        = string
  default     = "* * * * *"
}

variable "schedule_time_zone" {
  type    = string
  default = "Etc/UTC"
}

variable "token_max_ttl" {
  description = "Longest token lifetime a client may ask for."
  type        = string
  default     = "24h"
}

variable "message_retention" {
  description = "How long the worker topic keeps messages (for seek and replay)."
  type        = string
  default     = "86400s"
}

variable "dead_letter_retention" {
  description = "How long undeliverable worker messages are kept on the dead-letter subscription."
  type        = string
  default     = "604800s"
}

variable "cloud_run_budget" {
  description = "Longest one run of a job may take on the cloud worker (a duration such as 60s); a run that reaches it is stopped and its rest requested again at once. Keep it well below runner_timeout_seconds."
  type        = string
  default     = "60s"
}

variable "tenant_run_cap" {
  description = "Runs of one tenant's cloud-worker jobs at once across every runner instance; a tenant over it has its runs delayed to the next tick, not dropped."
  type        = number
  default     = 4
}

variable "shard_objects" {
  description = "A gcs run on the cloud worker that finds more objects to read than this reads that many and hands the rest, as many at a time, to other runner instances (1 to 5000)."
  type        = number
  default     = 1000
  # PART_MAX_OBJECTS of shared/runs/run-request.ts: the objects one part request may carry
  # (the runner refuses SLUICE_SHARD_OBJECTS above it at start; npm run check:deploy compares).
  validation {
    condition     = var.shard_objects >= 1 && var.shard_objects <= 5000 && floor(var.shard_objects) == var.shard_objects
    error_message = "shard_objects must be a whole number from 1 to 5000 (the objects one part request may carry)."
  }
}

variable "runner_max_instances" {
  description = "Most runner function instances (the cloud worker's capacity: runs at once = this x runner_concurrency)."
  type        = number
  default     = 20
}

variable "runner_concurrency" {
  description = "Run requests one runner instance runs at once (runs mostly wait on storage and networks)."
  type        = number
  default     = 4
}

variable "runner_memory" {
  description = "Memory of a runner instance, shared by its concurrent runs (parquet objects are read into memory)."
  type        = string
  default     = "1Gi"
}

variable "runner_timeout_seconds" {
  description = "Longest a runner may take over one request; also how long Pub/Sub waits for its answer. Keep cloud_run_budget well below it."
  type        = number
  default     = 540
  validation {
    condition     = var.runner_timeout_seconds >= 60 && var.runner_timeout_seconds <= 600
    error_message = "runner_timeout_seconds must be 60 to 600 (Pub/Sub waits at most 600 s for a push answer)."
  }
}

variable "runner_max_delivery_attempts" {
  description = "Deliveries of a run request that fail before Pub/Sub dead-letters it (reported as run-job-failure)."
  type        = number
  default     = 5
  validation {
    condition     = var.runner_max_delivery_attempts >= 5 && var.runner_max_delivery_attempts <= 100
    error_message = "Pub/Sub allows 5 to 100 delivery attempts."
  }
}

variable "deploy_revision" {
  description = "Bump to make every function start new instances (e.g. after adding a secret version)."
  type        = string
  default     = "1"
}

variable "web_dir" {
  description = "Where `npm run build` wrote the web UI's static files."
  type        = string
  default     = "../dist/web"
}
