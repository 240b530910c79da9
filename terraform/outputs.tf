output "base_url" {
  description = "The API's base URL (`sluice --server`). The managed certificate can take 15-60 minutes to become active."
  value       = "https://${local.domain}"
}

output "load_balancer_ip" {
  description = "Point the DNS name in var.domain at this address."
  value       = google_compute_global_address.api.address
}

output "api_service_account" {
  value = google_service_account.api.email
}

output "runner_service_account" {
  value = google_service_account.runner.email
}

output "scheduler_service_account" {
  value = google_service_account.scheduler.email
}

output "build_service_account" {
  value = google_service_account.build.email
}

output "function_names" {
  value = { for name, fn in google_cloudfunctions2_function.fn : name => fn.name }
}

output "secrets" {
  description = "Secret Manager secrets to fill (DEPLOY.md)."
  value       = local.secret_ids
}

# For `sluice gcs notify BUCKET --job NAME --tenant T --wake RUNNER_URL --push-service-account EMAIL`:
# object notifications wake a job without a trigger on the cloud worker (functions/runs/wake.ts).
output "runner_url" {
  value = google_cloudfunctions2_function.fn["runner"].service_config[0].uri
}

output "run_push_service_account" {
  value = google_service_account.run_push.email
}

output "relay_service_account" {
  value = google_service_account.relay.email
}
