# The `cloud` worker: Cloud Scheduler calls the scheduled function every tick, with
# an OIDC token of its own service account (the only identity allowed to invoke it).
resource "google_cloud_scheduler_job" "runner" {
  name             = "${var.name_prefix}-scheduled"
  region           = var.region
  schedule         = var.schedule
  time_zone        = var.schedule_time_zone
  attempt_deadline = "${min(var.scheduled_timeout_seconds, 1800)}s"

  retry_config {
    retry_count = 0 # the next tick is the retry
  }

  http_target {
    http_method = "POST"
    uri         = google_cloudfunctions2_function.fn["scheduled"].service_config[0].uri
    headers     = { "Content-Type" = "application/json" }
    body        = base64encode("{}")

    oidc_token {
      service_account_email = google_service_account.scheduler.email
      audience              = google_cloudfunctions2_function.fn["scheduled"].service_config[0].uri
    }
  }

  depends_on = [google_project_service.apis]
}
