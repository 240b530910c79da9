# The cloud worker's run queue (functions/runs/): the scheduled tick publishes one run
# request per due job to `sluice-runs`; Pub/Sub pushes each to the runner function, which
# scales out to runner_max_instances x runner_concurrency runs at once. A request whose
# runs fail runner_max_delivery_attempts times goes to `sluice-runs-dead-letters`, whose
# subscription pushes it to the same function to be reported (run-job-failure).
# The names are those of functions/runs/run-channel.ts.

resource "google_pubsub_topic" "runs" {
  name                       = "sluice-runs"
  message_retention_duration = "86400s"
  depends_on                 = [google_project_service.apis]
}

resource "google_pubsub_topic" "run_dead_letters" {
  name                       = "sluice-runs-dead-letters"
  message_retention_duration = var.dead_letter_retention
  depends_on                 = [google_project_service.apis]
}

# The identity Pub/Sub's pushes carry (an OIDC token Cloud Run checks): it may invoke the
# runner function and nothing else.
resource "google_service_account" "run_push" {
  account_id   = "${var.name_prefix}-run-push"
  display_name = "Pub/Sub push identity that invokes the runner"
}

resource "google_cloud_run_service_iam_member" "push_invokes_runner" {
  location = var.region
  service  = google_cloudfunctions2_function.fn["runner"].name
  role     = "roles/run.invoker"
  member   = "serviceAccount:${google_service_account.run_push.email}"
}

# Pub/Sub's service agent mints those tokens.
resource "google_service_account_iam_member" "pubsub_agent_mints_push_tokens" {
  service_account_id = google_service_account.run_push.name
  role               = "roles/iam.serviceAccountTokenCreator"
  member             = local.pubsub_agent
}

resource "google_pubsub_subscription" "runs" {
  name  = "sluice-runs-runner"
  topic = google_pubsub_topic.runs.id
  # Pub/Sub waits this long for the runner's answer before it delivers again.
  ack_deadline_seconds       = var.runner_timeout_seconds
  message_retention_duration = "86400s"
  expiration_policy {
    ttl = "" # never expires
  }
  retry_policy {
    minimum_backoff = "10s"
    maximum_backoff = "600s"
  }
  dead_letter_policy {
    dead_letter_topic     = google_pubsub_topic.run_dead_letters.id
    max_delivery_attempts = var.runner_max_delivery_attempts
  }
  push_config {
    push_endpoint = google_cloudfunctions2_function.fn["runner"].service_config[0].uri
    oidc_token {
      service_account_email = google_service_account.run_push.email
      audience              = google_cloudfunctions2_function.fn["runner"].service_config[0].uri
    }
  }
}

resource "google_pubsub_subscription" "run_dead_letters" {
  name                       = "sluice-runs-dead-letters-runner"
  topic                      = google_pubsub_topic.run_dead_letters.id
  ack_deadline_seconds       = 60
  message_retention_duration = var.dead_letter_retention
  expiration_policy {
    ttl = ""
  }
  retry_policy {
    minimum_backoff = "10s"
    maximum_backoff = "600s"
  }
  push_config {
    push_endpoint = google_cloudfunctions2_function.fn["runner"].service_config[0].uri
    oidc_token {
      service_account_email = google_service_account.run_push.email
      audience              = google_cloudfunctions2_function.fn["runner"].service_config[0].uri
    }
  }
}

# Pub/Sub's agent forwards dead letters: it publishes to the dead-letter topic (and
# acknowledges on the source subscription: roles/pubsub.subscriber, terraform/pubsub.tf).
resource "google_pubsub_topic_iam_member" "run_dead_letter_publisher" {
  topic  = google_pubsub_topic.run_dead_letters.name
  role   = "roles/pubsub.publisher"
  member = local.pubsub_agent
}

# The API requests a run when a job is deployed (or staged again) on `cloud`, so that it runs
# at once rather than at the next tick. Publishing to this topic is all it may do here.
resource "google_pubsub_topic_iam_member" "api_requests_runs" {
  topic  = google_pubsub_topic.runs.name
  role   = "roles/pubsub.publisher"
  member = "serviceAccount:${google_service_account.api.email}"
}

# The cloud worker publishes run requests: the tick (functions/runs/dispatch.ts), a run's
# continuation after its budget (runner.ts) and the parts of a large listing (shards.ts).
# It pulls nothing in the cloud (Pub/Sub pushes to it), so it holds no subscriber role.
resource "google_pubsub_topic_iam_member" "runner_requests_runs" {
  topic  = google_pubsub_topic.runs.name
  role   = "roles/pubsub.publisher"
  member = "serviceAccount:${google_service_account.runner.email}"
}
