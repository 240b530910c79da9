# One service account per job to do, each with only the roles that job needs;
# no primitive role (owner, editor, viewer) anywhere (`npm run check:deploy` checks).

resource "google_service_account" "api" {
  account_id   = "${var.name_prefix}-api"
  display_name = "Sluice API functions"
}

resource "google_service_account" "runner" {
  account_id   = "${var.name_prefix}-runner"
  display_name = "Sluice scheduled runner (the cloud worker)"
}

resource "google_service_account" "relay" {
  account_id   = "${var.name_prefix}-relay"
  display_name = "Sluice event relay (reads events, publishes to the worker topic)"
}

resource "google_service_account" "scheduler" {
  account_id   = "${var.name_prefix}-scheduler"
  display_name = "Cloud Scheduler identity that invokes the runner"
}

resource "google_service_account" "eventarc" {
  account_id   = "${var.name_prefix}-eventarc"
  display_name = "Sluice event relay trigger (Eventarc)"
}

resource "google_service_account" "build" {
  account_id   = "${var.name_prefix}-build"
  display_name = "Builds the functions' containers"
}

locals {
  project_roles = {
    # Stores everything in Firestore. Its Pub/Sub rights are two custom roles in
    # terraform/pubsub.tf (the worker topic only, and the per-worker subscriptions), not a
    # project-wide predefined Pub/Sub role (`npm run check:deploy` checks).
    api = {
      member = "serviceAccount:${google_service_account.api.email}"
      roles  = ["roles/datastore.user", "roles/logging.logWriter"]
    }
    # No Cloud Storage role: the runner runs every tenant's jobs, and a job that could read
    # buckets as the runner could read every tenant's. A gcs job on the cloud worker
    # brings its own service-account key instead (DEPLOY.md, "Jobs on the cloud worker").
    # No project-wide Pub/Sub role either (it could read every tenant's subscriptions and
    # publish anywhere): it publishes to the run topic and the worker topic, granted on
    # those topics alone (terraform/runs.tf, terraform/pubsub.tf; `npm run check:deploy` checks).
    runner = {
      member = "serviceAccount:${google_service_account.runner.email}"
      roles  = ["roles/datastore.user", "roles/logging.logWriter"]
    }
    # The event relay only reads (the event and the tenant's message routes) and publishes
    # to the worker topic (terraform/pubsub.tf). No secret, no signing key.
    relay = {
      member = "serviceAccount:${google_service_account.relay.email}"
      roles  = ["roles/datastore.viewer", "roles/logging.logWriter"]
    }
    # Receives Firestore events for the event relay; invoking it is granted on that function only.
    eventarc = {
      member = "serviceAccount:${google_service_account.eventarc.email}"
      roles  = ["roles/eventarc.eventReceiver"]
    }
    # Reads the function sources through a conditional grant below, not every bucket: a
    # build runs the install scripts of the archives' dependencies as this account.
    build = {
      member = "serviceAccount:${google_service_account.build.email}"
      roles  = ["roles/logging.logWriter", "roles/artifactregistry.writer"]
    }
  }

  project_bindings = merge([
    for who, grant in local.project_roles : {
      for role in grant.roles : "${who}/${role}" => { member = grant.member, role = role }
    }
  ]...)
}

resource "google_project_iam_member" "grants" {
  for_each = { for key, grant in local.project_bindings : key => grant if !startswith(key, "build/") }
  project  = var.project_id
  role     = each.value.role
  member   = each.value.member
}

resource "google_project_iam_member" "build" {
  for_each = { for key, grant in local.project_bindings : key => grant if startswith(key, "build/") }
  project  = var.project_id
  role     = each.value.role
  member   = each.value.member
}

# The build reads the function sources and nothing else of Cloud Storage. It fetches each
# archive from the bucket Cloud Functions copies sources to, gcf-v2-sources-<number>-<region>,
# which Cloud Functions creates at its first deploy (so the grant cannot sit on that bucket
# before it exists): a project grant with a condition that names that bucket, and ours.
resource "google_project_iam_member" "build_reads_sources" {
  project = var.project_id
  role    = "roles/storage.objectViewer"
  member  = "serviceAccount:${google_service_account.build.email}"
  condition {
    title       = "function sources only"
    description = "The Cloud Functions sources bucket of the region and Sluice's own sources bucket."
    expression = join(" || ", [
      for bucket in ["gcf-v2-sources-${data.google_project.this.number}-${var.region}", google_storage_bucket.sources.name] :
      "resource.name == \"projects/_/buckets/${bucket}\" || resource.name.startsWith(\"projects/_/buckets/${bucket}/\")"
    ])
  }
}
