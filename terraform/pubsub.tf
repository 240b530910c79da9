# The channel to workers (functions/messaging/worker-channel.ts): one topic; the API
# creates one filtered subscription per worker when the worker is created.
resource "google_pubsub_topic" "worker_messages" {
  name                       = "sluice-worker-messages"
  message_retention_duration = var.message_retention
  depends_on                 = [google_project_service.apis]
}

# Where messages go that a worker failed to acknowledge too many times.
resource "google_pubsub_topic" "dead_letters" {
  name                       = "sluice-worker-messages-dead-letters"
  message_retention_duration = var.dead_letter_retention
  depends_on                 = [google_project_service.apis]
}

# Keeps dead letters for inspection (`gcloud pubsub subscriptions pull`).
resource "google_pubsub_subscription" "dead_letters" {
  name                       = "sluice-worker-messages-dead-letters-hold"
  topic                      = google_pubsub_topic.dead_letters.id
  message_retention_duration = var.dead_letter_retention
  retain_acked_messages      = false
  ack_deadline_seconds       = 60
  expiration_policy {
    ttl = "" # never expires
  }
}

# Pub/Sub's own service agent forwards dead letters: it must publish to the
# dead-letter topic and acknowledge on the worker subscriptions.
locals {
  pubsub_agent = "serviceAccount:service-${data.google_project.this.number}@gcp-sa-pubsub.iam.gserviceaccount.com"
}

resource "google_pubsub_topic_iam_member" "dead_letter_publisher" {
  topic  = google_pubsub_topic.dead_letters.name
  role   = "roles/pubsub.publisher"
  member = local.pubsub_agent
}

resource "google_project_iam_member" "pubsub_agent_subscriber" {
  project = var.project_id
  role    = "roles/pubsub.subscriber"
  member  = local.pubsub_agent
}
