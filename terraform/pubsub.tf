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

# The agent must be able to acknowledge on every subscription with a dead-letter policy:
# sluice-runs-runner (terraform/runs.tf) and the per-worker subscriptions `sluice-w.*`,
# which the API creates at run time, so no grant made here can name them. Hence the
# project: the agent is Google's own identity, used by Pub/Sub alone, which no tenant and
# no Sluice function can act as.
resource "google_project_iam_member" "pubsub_agent_subscriber" {
  project = var.project_id
  role    = "roles/pubsub.subscriber"
  member  = local.pubsub_agent
}

# The API's Pub/Sub rights (functions/messaging/worker-channel.ts), as narrow as Pub/Sub
# allows. On the worker topic only: read it, publish to it, attach subscriptions to it.
# The topic itself is created here, so the API needs no pubsub.topics.create.
resource "google_project_iam_custom_role" "api_worker_topic" {
  role_id     = "${replace(var.name_prefix, "-", "_")}_api_worker_topic"
  title       = "Sluice API: the worker topic"
  description = "Publish to the worker topic and attach per-worker subscriptions to it."
  permissions = ["pubsub.topics.attachSubscription", "pubsub.topics.get", "pubsub.topics.publish"]
}

resource "google_pubsub_topic_iam_member" "api_worker_topic" {
  topic  = google_pubsub_topic.worker_messages.name
  role   = google_project_iam_custom_role.api_worker_topic.id
  member = "serviceAccount:${google_service_account.api.email}"
}

# Creating a subscription needs pubsub.subscriptions.create on the project (a subscription
# does not exist before it is created, so it cannot carry the grant), and the API creates
# one per worker at run time; it also reads, deletes and pulls from them (the workers' long
# poll). Only these four: no topic administration, no snapshots, no schemas, no IAM.
resource "google_project_iam_custom_role" "api_worker_subscriptions" {
  role_id     = "${replace(var.name_prefix, "-", "_")}_api_worker_subscriptions"
  title       = "Sluice API: per-worker subscriptions"
  description = "Create, read, delete and pull from the per-worker subscriptions of the worker topic."
  permissions = [
    "pubsub.subscriptions.consume",
    "pubsub.subscriptions.create",
    "pubsub.subscriptions.delete",
    "pubsub.subscriptions.get",
  ]
}

resource "google_project_iam_member" "api_worker_subscriptions" {
  project = var.project_id
  role    = google_project_iam_custom_role.api_worker_subscriptions.id
  member  = "serviceAccount:${google_service_account.api.email}"
}

# The cloud worker (the scheduled tick drains the outbox: functions/messaging/outbox.ts) and
# the event relay (functions/messaging/event-relay.ts) publish worker messages. Publishing
# to this topic is all either may do with it; neither holds a project-wide Pub/Sub role.
resource "google_pubsub_topic_iam_member" "runner_publishes_worker_messages" {
  topic  = google_pubsub_topic.worker_messages.name
  role   = "roles/pubsub.publisher"
  member = "serviceAccount:${google_service_account.runner.email}"
}

resource "google_pubsub_topic_iam_member" "relay_publishes_worker_messages" {
  topic  = google_pubsub_topic.worker_messages.name
  role   = "roles/pubsub.publisher"
  member = "serviceAccount:${google_service_account.relay.email}"
}
