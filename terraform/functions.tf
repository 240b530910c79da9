# One Cloud Function (2nd gen, Node 20) per entry point of functions/entry/table.ts.
# `paths` are the load balancer's path rules for the function (`/api/x/*` does not
# match `/api/x` itself, hence both). Adding a family: add it here;
# `npm run check:deploy` fails until every entry has its function and every route
# of the family reaches it. `health` also takes `/api/*`: an API path that no family
# serves gets the contract's 404 body (every path outside /api/ is the web UI, ui.tf).
#
# `secrets`: the groups of local.secret_env mounted on the function, only those its code
# reads (`npm run check:deploy` compares them with what each bundle reads). `timeout`:
# seconds, for a function whose requests may take longer than local.timeouts gives its kind.
locals {
  functions = {
    health             = { kind = "http", paths = ["/api/health", "/api/*"], secrets = [] }
    openapi            = { kind = "http", paths = ["/api/openapi.json"], secrets = [] }
    tokens             = { kind = "http", paths = ["/api/tokens/*"], secrets = ["signing"] }
    auth               = { kind = "http", paths = ["/api/auth/*"], secrets = ["signing"] }
    tenants            = { kind = "http", paths = ["/api/tenants", "/api/tenants/*"], secrets = ["signing"] }
    users              = { kind = "http", paths = ["/api/users", "/api/users/*"], secrets = ["signing"] }
    api-keys           = { kind = "http", paths = ["/api/api-keys", "/api/api-keys/*"], secrets = ["signing"] }
    workers            = { kind = "http", paths = ["/api/workers", "/api/workers/*"], secrets = ["signing"] }
    enrollment-secrets = { kind = "http", paths = ["/api/enrollment-secrets", "/api/enrollment-secrets/*"], secrets = ["signing"] }
    contexts           = { kind = "http", paths = ["/api/contexts/*"], secrets = ["signing"] }
    jobs               = { kind = "http", paths = ["/api/jobs", "/api/jobs/*"], secrets = ["signing", "secrets"] }
    events             = { kind = "http", paths = ["/api/events"], secrets = ["signing"] }
    secrets            = { kind = "http", paths = ["/api/secrets", "/api/secrets/*"], secrets = ["signing", "secrets"] }
    variables          = { kind = "http", paths = ["/api/variables", "/api/variables/*"], secrets = ["signing"] }
    messages           = { kind = "http", paths = ["/api/messages"], secrets = ["signing"] }
    # The workers' long poll (GET /api/worker/messages, up to 55 s) and server-sent events
    # (GET /api/worker/stream, open until the token expires) hold requests open: the load
    # balancer keeps a stream open up to this timeout.
    worker-api = { kind = "http", paths = ["/api/worker/*"], secrets = ["signing", "secrets"], timeout = 3600 }
    scheduled  = { kind = "tasks", paths = [], secrets = [] }
    # Pub/Sub pushes the cloud worker's run requests to it (terraform/runs.tf).
    runner = { kind = "runs", paths = [], secrets = ["secrets"] }
    # Eventarc calls it for every event recorded in Firestore: message triggers see it.
    event-relay = { kind = "relay", paths = [], secrets = [] }
  }

  # Request timeouts in seconds, by kind (a function's own `timeout` wins). An API request
  # answers within a minute; an event-driven function (the relay) may have at most 540 s.
  timeouts = {
    http  = 60
    tasks = var.scheduled_timeout_seconds
    runs  = var.runner_timeout_seconds
    relay = 60
  }

  # The identity each kind runs as: the API; the cloud worker (the scheduled tick and the
  # runner: no storage role, no signing key); the event relay (reads events, publishes to
  # the worker topic, reads no secret).
  service_accounts = {
    http  = google_service_account.api.email
    tasks = google_service_account.runner.email
    runs  = google_service_account.runner.email
    relay = google_service_account.relay.email
  }

  # The secrets a function may be given, by the group names of local.functions' `secrets`.
  secret_env = {
    signing = {
      SLUICE_SIGNING_KEY           = google_secret_manager_secret.signing_key.secret_id
      SLUICE_PREVIOUS_SIGNING_KEYS = google_secret_manager_secret.previous_signing_keys.secret_id
    }
    secrets = {
      SLUICE_SECRETS_KEY = google_secret_manager_secret.secrets_key.secret_id
    }
  }

  http_functions = { for name, fn in local.functions : name => fn if fn.kind == "http" }

  # Every function reads its configuration from the same variables as the local stack.
  common_env = {
    SLUICE_PROJECT_ID      = var.project_id
    SLUICE_TOKEN_MAX_TTL   = var.token_max_ttl
    SLUICE_DEPLOY_REVISION = var.deploy_revision
    NODE_OPTIONS           = "--enable-source-maps"
    # Google's load balancer appends `<client>, <balancer>` to X-Forwarded-For: only that
    # client entry is trusted for the per-address login limit (scripts/check-deploy.ts).
    SLUICE_TRUSTED_PROXY_HOPS = "1"
    # The cloud worker's jobs may connect to no loopback or private address (link-local
    # and metadata addresses are refused anyway), and each run has a budget within a tick.
    SLUICE_EGRESS_ALLOW     = ""
    SLUICE_CLOUD_RUN_BUDGET = var.cloud_run_budget
    SLUICE_TENANT_RUN_CAP   = tostring(var.tenant_run_cap)
    SLUICE_SHARD_OBJECTS    = tostring(var.shard_objects)
  }
}

resource "google_storage_bucket" "sources" {
  name                        = "${var.project_id}-${var.name_prefix}-sources"
  location                    = var.region
  uniform_bucket_level_access = true
  public_access_prevention    = "enforced"
  force_destroy               = true

  # Archives are named by content hash; old ones are only needed for a rollback.
  lifecycle_rule {
    condition {
      age = 30
    }
    action {
      type = "Delete"
    }
  }
}

resource "google_storage_bucket_object" "source" {
  for_each = local.functions
  bucket   = google_storage_bucket.sources.name
  name     = "${each.key}/${filesha256("${var.build_dir}/${each.key}.zip")}.zip"
  source   = "${var.build_dir}/${each.key}.zip"
}

resource "google_cloudfunctions2_function" "fn" {
  for_each = local.functions
  name     = "${var.name_prefix}-${each.key}"
  location = var.region

  build_config {
    runtime         = "nodejs20"
    entry_point     = "handler"
    service_account = google_service_account.build.id
    source {
      storage_source {
        bucket = google_storage_bucket.sources.name
        object = google_storage_bucket_object.source[each.key].name
      }
    }
  }

  service_config {
    service_account_email            = local.service_accounts[each.value.kind]
    available_memory                 = each.value.kind == "tasks" ? var.scheduled_memory : each.value.kind == "runs" ? var.runner_memory : var.function_memory
    available_cpu                    = var.function_cpu
    timeout_seconds                  = try(each.value.timeout, local.timeouts[each.value.kind])
    max_instance_request_concurrency = each.value.kind == "tasks" ? 1 : each.value.kind == "runs" ? var.runner_concurrency : var.function_concurrency
    max_instance_count               = each.value.kind == "tasks" ? 1 : each.value.kind == "runs" ? var.runner_max_instances : var.function_max_instances
    min_instance_count               = each.value.kind == "http" ? var.function_min_instances : 0
    # API functions are reached only through the load balancer; the scheduled tick only by
    # Cloud Scheduler, the runner only by Pub/Sub's push, the event relay only by Eventarc.
    ingress_settings               = each.value.kind == "http" ? "ALLOW_INTERNAL_AND_GCLB" : "ALLOW_INTERNAL_ONLY"
    all_traffic_on_latest_revision = true
    # A runner reads objects on one thread per vCPU it is given (functions/runner/cores/): the
    # instance may see the host's cores, not its share, so the count comes from function_cpu.
    environment_variables = merge(local.common_env, each.value.kind == "runs" ? {
      SLUICE_READ_THREADS = tostring(tonumber(var.function_cpu) >= 2 ? floor(tonumber(var.function_cpu)) : 0)
    } : {})

    # Only the secrets the function's code reads (local.functions `secrets`): the signing keys
    # reach the API functions that issue or verify tokens, the secrets key those that
    # encrypt or resolve secrets; the relay, the scheduled tick, health and openapi get none.
    dynamic "secret_environment_variables" {
      for_each = merge({}, [for group in each.value.secrets : local.secret_env[group]]...)
      content {
        key        = secret_environment_variables.key
        project_id = var.project_id
        secret     = secret_environment_variables.value
        version    = "latest"
      }
    }
  }

  # The event relay runs for each document created under tenants/{tenant}/events/.
  dynamic "event_trigger" {
    for_each = each.value.kind == "relay" ? [1] : []
    content {
      trigger_region        = var.firestore_location
      event_type            = "google.cloud.firestore.document.v1.created"
      retry_policy          = "RETRY_POLICY_RETRY"
      service_account_email = google_service_account.eventarc.email
      event_filters {
        attribute = "database"
        value     = google_firestore_database.main.name
      }
      event_filters {
        attribute = "document"
        value     = "tenants/{tenant}/events/{event}"
        operator  = "match-path-pattern"
      }
    }
  }

  depends_on = [
    google_project_service.apis,
    google_secret_manager_secret_iam_member.api,
    google_secret_manager_secret_iam_member.runner,
    google_project_iam_member.build,
    google_project_iam_member.build_reads_sources,
  ]
}

# The API authenticates every request itself (JWTs, CONTRACT section 1), so the load
# balancer may call the API functions without a Google identity. Ingress stays
# internal-and-load-balancer, so this does not expose the functions' own URLs.
resource "google_cloud_run_service_iam_member" "public" {
  for_each = local.http_functions
  location = var.region
  service  = google_cloudfunctions2_function.fn[each.key].name
  role     = "roles/run.invoker"
  member   = "allUsers"
}

resource "google_cloud_run_service_iam_member" "scheduler_invokes_runner" {
  location = var.region
  service  = google_cloudfunctions2_function.fn["scheduled"].name
  role     = "roles/run.invoker"
  member   = "serviceAccount:${google_service_account.scheduler.email}"
}

# Eventarc delivers Firestore events to the relay with its own identity, which may invoke
# that function and nothing else.
resource "google_cloud_run_service_iam_member" "eventarc_invokes_relay" {
  location = var.region
  service  = google_cloudfunctions2_function.fn["event-relay"].name
  role     = "roles/run.invoker"
  member   = "serviceAccount:${google_service_account.eventarc.email}"
}
