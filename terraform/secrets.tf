# Terraform creates the secrets but never their values (they would land in the state).
# DEPLOY.md shows how to add the versions before the first full `terraform apply`.
resource "google_secret_manager_secret" "signing_key" {
  secret_id = "${var.name_prefix}-signing-key"
  replication {
    auto {}
  }
  depends_on = [google_project_service.apis]
}

# JSON array of the public JWKs of earlier signing keys, still accepted after a rotation ("[]" at first).
resource "google_secret_manager_secret" "previous_signing_keys" {
  secret_id = "${var.name_prefix}-previous-signing-keys"
  replication {
    auto {}
  }
  depends_on = [google_project_service.apis]
}

resource "google_secret_manager_secret" "secrets_key" {
  secret_id = "${var.name_prefix}-secrets-key"
  replication {
    auto {}
  }
  depends_on = [google_project_service.apis]
}

locals {
  secret_ids = {
    signing_key           = google_secret_manager_secret.signing_key.secret_id
    previous_signing_keys = google_secret_manager_secret.previous_signing_keys.secret_id
    secrets_key           = google_secret_manager_secret.secrets_key.secret_id
  }
  # The runner (the cloud worker and the outbox) issues and verifies no token: it reads the
  # secrets key to resolve jobs' secrets, and never the signing keys.
  runner_secret_ids = {
    secrets_key = google_secret_manager_secret.secrets_key.secret_id
  }
}

resource "google_secret_manager_secret_iam_member" "api" {
  for_each  = local.secret_ids
  secret_id = each.value
  role      = "roles/secretmanager.secretAccessor"
  member    = "serviceAccount:${google_service_account.api.email}"
}

resource "google_secret_manager_secret_iam_member" "runner" {
  for_each  = local.runner_secret_ids
  secret_id = each.value
  role      = "roles/secretmanager.secretAccessor"
  member    = "serviceAccount:${google_service_account.runner.email}"
}
