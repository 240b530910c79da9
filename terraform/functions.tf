# One Cloud Function (2nd gen, Node 20) per entry point of functions/entry/table.ts.
# `paths` are the load balancer's path rules for the function (`/api/x/*` does not
# match `/api/x` itself, hence both). Adding a family: add it here;
# `npm run check:deploy` fails until every entry has its function and every route
# of the family reaches it. `health` also takes `/api/*`: an API path that no family
# serves gets the contract's 404 body (every path outside /api/ is the web UI, ui.tf).
locals {
  functions = {
    health             = { kind = "http", paths = ["/api/health", "/api/*"] }
    openapi            = { kind = "http", paths = ["/api/openapi.json"] }
    tokens             = { kind = "http", paths = ["/api/tokens/*"] }
    auth               = { kind = "http", paths = ["/api/auth/*"] }
    tenants            = { kind = "http", paths = ["/api/tenants", "/api/tenants/*"] }
    users              = { kind = "http", paths = ["/api/users", "/api/users/*"] }
    api-keys           = { kind = "http", paths = ["/api/api-keys", "/api/api-keys/*"] }
    workers            = { kind = "http", paths = ["/api/workers", "/api/workers/*"] }
    enrollment-secrets = { kind = "http", paths = ["/api/enrollment-secrets", "/api/enrollment-secrets/*"] }
    contexts           = { kind = "http", paths = ["/api/contexts/*"] }
    jobs               = { kind = "http", paths = ["/api/jobs", "/api/jobs/*"] }
    events             = { kind = "http", paths = ["/api/events"] }
    secrets            = { kind = "http", paths = ["/api/secrets", "/api/secrets/*"] }
    variables          = { kind = "http", paths = ["/api/variables", "/api/variables/*"] }
    messages           = { kind = "http", paths = ["/api/messages"] }
    worker-api         = { kind = "http", paths = ["/api/worker/*"] }
    scheduled          = { kind = "tasks", paths = [] }
    # Pub/Sub pushes the cloud worker's run requests to it (terraform/runs.tf).
    runner = { kind = "runs", paths = [] }
    # Eventarc calls it for every event recorded in Firestore: message triggers see it.
    event-relay = { kind = "relay", paths = [] }
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

  # The scheduled tick and the runner run as the runner identity (no storage role, no signing key).
  runner_kinds = ["tasks", "runs"]
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
    service_account_email            = contains(local.runner_kinds, each.value.kind) ? google_service_account.runner.email : google_service_account.api.email
    available_memory                 = each.value.kind == "tasks" ? var.scheduled_memory : each.value.kind == "runs" ? var.runner_memory : var.function_memory
    available_cpu                    = var.function_cpu
    timeout_seconds                  = each.value.kind == "tasks" ? var.scheduled_timeout_seconds : each.value.kind == "runs" ? var.runner_timeout_seconds : 3600
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

    # The signing keys reach the API functions only: the runner and the relay issue and verify no token.
    dynamic "secret_environment_variables" {
      for_each = each.value.kind != "http" ? {} : {
        SLUICE_SIGNING_KEY           = google_secret_manager_secret.signing_key.secret_id
        SLUICE_PREVIOUS_SIGNING_KEYS = google_secret_manager_secret.previous_signing_keys.secret_id
      }
      content {
        key        = secret_environment_variables.key
        project_id = var.project_id
        secret     = secret_environment_variables.value
        version    = "latest"
      }
    }
    secret_environment_variables {
      key        = "SLUICE_SECRETS_KEY"
      project_id = var.project_id
      secret     = google_secret_manager_secret.secrets_key.secret_id
      version    = "latest"
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
