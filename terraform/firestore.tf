resource "google_firestore_database" "main" {
  name                    = "(default)"
  location_id             = var.firestore_location
  type                    = "FIRESTORE_NATIVE"
  concurrency_mode        = "PESSIMISTIC"
  delete_protection_state = "DELETE_PROTECTION_ENABLED"
  deletion_policy         = "ABANDON" # `terraform destroy` leaves the data; DEPLOY.md says how to delete it
  depends_on              = [google_project_service.apis]
}

# Composite indexes of every query with more than one field (`npm run check:deploy`
# finds the queries in the code). Events (tenants/*/events) are filtered by type, job,
# worker or source and read in id order (event ids begin with their time, so id order is
# time order); Firestore merges these pairwise indexes for queries that combine filters.
locals {
  composite_indexes = {
    events_type_id   = { collection = "events", fields = [["type", "ASCENDING"], ["id", "ASCENDING"]] }
    events_job_id    = { collection = "events", fields = [["job", "ASCENDING"], ["id", "ASCENDING"]] }
    events_worker_id = { collection = "events", fields = [["worker", "ASCENDING"], ["id", "ASCENDING"]] }
    events_source_id = { collection = "events", fields = [["source", "ASCENDING"], ["id", "ASCENDING"]] }
    # The same, newest first (GET /api/events?order=newest).
    events_type_id_desc   = { collection = "events", fields = [["type", "ASCENDING"], ["id", "DESCENDING"]] }
    events_job_id_desc    = { collection = "events", fields = [["job", "ASCENDING"], ["id", "DESCENDING"]] }
    events_worker_id_desc = { collection = "events", fields = [["worker", "ASCENDING"], ["id", "DESCENDING"]] }
    events_source_id_desc = { collection = "events", fields = [["source", "ASCENDING"], ["id", "DESCENDING"]] }
    # The pages of GET /api/api-keys, /api/workers and /api/enrollment-secrets: creation order, then id.
    api_keys_created_id           = { collection = "api-keys", fields = [["created_at", "ASCENDING"], ["id", "ASCENDING"]] }
    workers_created_id            = { collection = "workers", fields = [["created_at", "ASCENDING"], ["id", "ASCENDING"]] }
    enrollment_secrets_created_id = { collection = "enrollment-secrets", fields = [["created_at", "ASCENDING"], ["id", "ASCENDING"]] }
  }
}

resource "google_firestore_index" "composite" {
  for_each    = local.composite_indexes
  database    = google_firestore_database.main.name
  collection  = each.value.collection
  query_scope = "COLLECTION"

  dynamic "fields" {
    for_each = each.value.fields
    content {
      field_path = fields.value[0]
      order      = fields.value[1]
    }
  }
}

# Fingerprints (tenants/*/jobs/*/fingerprints) carry `expires_at`; Firestore deletes
# expired ones. The field's single-field index is dropped: nothing queries it, and an
# index on an ever-increasing timestamp only creates write hotspots.
resource "google_firestore_field" "fingerprint_ttl" {
  database   = google_firestore_database.main.name
  collection = "fingerprints"
  field      = "expires_at"

  ttl_config {}
  index_config {}
}

# Failed logins and key exchanges (rate-limits/*/rate-limit-failures, functions/auth/
# rate-limit.ts) carry `expires_at`, a minute after the failure: Firestore deletes them.
resource "google_firestore_field" "rate_limit_failure_ttl" {
  database   = google_firestore_database.main.name
  collection = "rate-limit-failures"
  field      = "expires_at"

  ttl_config {}
  index_config {}
}

# Events (tenants/*/events, functions/events/event-log.ts) carry `expires_at`, 30 days
# after they happened: the log does not grow without bound. (The local stack, whose
# emulator has no TTL, sweeps them in a periodic task instead.)
resource "google_firestore_field" "event_ttl" {
  database   = google_firestore_database.main.name
  collection = "events"
  field      = "expires_at"

  ttl_config {}
  index_config {}
}

# Worker stream tickets (stream-tickets/*, functions/worker-api/stream-tickets.ts) are
# single-use and valid 30 s; unused ones are deleted by their `expires_at`.
resource "google_firestore_field" "stream_ticket_ttl" {
  database   = google_firestore_database.main.name
  collection = "stream-tickets"
  field      = "expires_at"

  ttl_config {}
  index_config {}
}

# Web sessions (sessions/*, functions/auth/routes.ts) carry `expires_at`, when their cookie
# ends: Firestore deletes them after, rather than keeping one document per sign-in for ever.
resource "google_firestore_field" "session_ttl" {
  database   = google_firestore_database.main.name
  collection = "sessions"
  field      = "expires_at"

  ttl_config {}
  index_config {}
}

# Counter documents of runs read in parts on the cloud worker (tenants/*/jobs/*/runs,
# functions/runs/shards.ts) carry `expires_at`, a day after their last change: a run whose
# parts were lost does not keep its document for ever.
resource "google_firestore_field" "run_ttl" {
  database   = google_firestore_database.main.name
  collection = "runs"
  field      = "expires_at"

  ttl_config {}
  index_config {}
}

# Run requests parked for a slot of their tenant (tenants/*/parked-runs,
# functions/runs/parked-runs.ts) carry `expires_at`, a day after they were parked: one left
# behind (its releaser died between publishing and deleting it) does not stay for ever.
resource "google_firestore_field" "parked_run_ttl" {
  database   = google_firestore_database.main.name
  collection = "parked-runs"
  field      = "expires_at"

  ttl_config {}
  index_config {}
}

# Single-field indexes with collection-group scope, for collection-group queries
# (Firestore creates single-field indexes with collection scope only).
locals {
  collection_group_fields = {
    outbox_created_at = { collection = "outbox", field = "created_at" }
    # The scheduled `cloud` worker finds the jobs deployed to it across tenants.
    jobs_cloud_deployment = { collection = "jobs", field = "deployments.cloud.version" }
    # The offline sweep finds workers still marked online across tenants.
    workers_online = { collection = "workers", field = "online" }
    # The event relay's listener (functions/messaging/event-relay.ts) reads new events of every
    # tenant by id; in the cloud Eventarc calls the relay instead, and this index stays small.
    events_id = { collection = "events", field = "id" }
  }
}

resource "google_firestore_field" "collection_group" {
  for_each   = local.collection_group_fields
  database   = google_firestore_database.main.name
  collection = each.value.collection
  field      = each.value.field

  index_config {
    indexes {
      order       = "ASCENDING"
      query_scope = "COLLECTION"
    }
    indexes {
      order       = "DESCENDING"
      query_scope = "COLLECTION"
    }
    indexes {
      order       = "ASCENDING"
      query_scope = "COLLECTION_GROUP"
    }
  }
}
