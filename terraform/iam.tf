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
    runner = {
      member = "serviceAccount:${google_service_account.runner.email}"
      roles = [
        "roles/datastore.user",
        "roles/pubsub.publisher",
        "roles/pubsub.subscriber",
        "roles/logging.logWriter",
      ]
    }
    # Receives Firestore events for the event relay; invoking it is granted on that function only.
    eventarc = {
      member = "serviceAccount:${google_service_account.eventarc.email}"
      roles  = ["roles/eventarc.eventReceiver"]
    }
    build = {
      member = "serviceAccount:${google_service_account.build.email}"
      roles  = ["roles/logging.logWriter", "roles/artifactregistry.writer", "roles/storage.objectViewer"]
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
