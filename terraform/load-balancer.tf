# One HTTPS base URL: a global external Application Load Balancer whose URL map sends
# `/api/<family>/...` to that family's function through a serverless NEG, and every
# other path to the web UI's bucket (ui.tf).
#
# Why not Firebase Hosting rewrites: Hosting strips every cookie except `__session`
# before calling a function, which would drop the web UI's `sluice_session` and
# `sluice_csrf` cookies, and it cuts requests at 60 s, which would end the workers'
# `/api/worker/stream` server-sent events. The load balancer passes cookies through,
# keeps streams open up to the function timeout, lets the functions accept traffic
# from it alone (ingress internal-and-load-balancer), and takes a Cloud Armor policy.
resource "google_compute_global_address" "api" {
  name       = "${var.name_prefix}-api"
  depends_on = [google_project_service.apis]
}

# Without `domain`, the name is <ip>.sslip.io: a third party's DNS answers for it, and
# whoever controls that DNS can obtain a certificate for the name. For trials only.
locals {
  domain = var.domain != "" ? var.domain : "${replace(google_compute_global_address.api.address, ".", "-")}.sslip.io"
}

resource "google_compute_region_network_endpoint_group" "fn" {
  for_each              = local.http_functions
  name                  = "${var.name_prefix}-${each.key}"
  region                = var.region
  network_endpoint_type = "SERVERLESS"
  cloud_run {
    # A 2nd gen function runs as the Cloud Run service of the same name.
    service = google_cloudfunctions2_function.fn[each.key].name
  }
}

resource "google_compute_backend_service" "fn" {
  for_each              = local.http_functions
  name                  = "${var.name_prefix}-${each.key}"
  load_balancing_scheme = "EXTERNAL_MANAGED"
  protocol              = "HTTPS"
  backend {
    group = google_compute_region_network_endpoint_group.fn[each.key].id
  }
  log_config {
    enable      = true
    sample_rate = 1
  }
}

resource "google_compute_url_map" "api" {
  name = "${var.name_prefix}-api"
  # Everything outside /api/... is the web UI (terraform/ui.tf). Paths under /api/ that
  # no family serves reach the health function's `/api/*` rule and get the contract's 404 body.
  default_service = google_compute_backend_bucket.web.id

  host_rule {
    hosts        = ["*"]
    path_matcher = "api"
  }

  path_matcher {
    name            = "api"
    default_service = google_compute_backend_bucket.web.id

    dynamic "path_rule" {
      for_each = local.http_functions
      content {
        paths   = path_rule.value.paths
        service = google_compute_backend_service.fn[path_rule.key].id
      }
    }

    # The web UI's API reference page (rendered in the browser from /api/openapi.json).
    path_rule {
      paths   = ["/api/docs"]
      service = google_compute_backend_bucket.web.id
    }
  }
}

resource "google_compute_managed_ssl_certificate" "api" {
  name = "${var.name_prefix}-api-${substr(sha256(local.domain), 0, 8)}"
  managed {
    domains = [local.domain]
  }
  lifecycle {
    create_before_destroy = true
  }
}

# TLS 1.2 or later with modern ciphers only (the default policy accepts TLS 1.0 and 1.1).
resource "google_compute_ssl_policy" "api" {
  name            = "${var.name_prefix}-api"
  profile         = "MODERN"
  min_tls_version = "TLS_1_2"
  depends_on      = [google_project_service.apis]
}

resource "google_compute_target_https_proxy" "api" {
  name             = "${var.name_prefix}-api"
  url_map          = google_compute_url_map.api.id
  ssl_certificates = [google_compute_managed_ssl_certificate.api.id]
  ssl_policy       = google_compute_ssl_policy.api.self_link
}

resource "google_compute_global_forwarding_rule" "https" {
  name                  = "${var.name_prefix}-https"
  load_balancing_scheme = "EXTERNAL_MANAGED"
  ip_address            = google_compute_global_address.api.id
  port_range            = "443"
  target                = google_compute_target_https_proxy.api.id
}

# Plain HTTP only redirects to HTTPS.
resource "google_compute_url_map" "redirect" {
  name = "${var.name_prefix}-http-redirect"
  default_url_redirect {
    https_redirect = true
    strip_query    = false
  }
}

resource "google_compute_target_http_proxy" "redirect" {
  name    = "${var.name_prefix}-http-redirect"
  url_map = google_compute_url_map.redirect.id
}

resource "google_compute_global_forwarding_rule" "http" {
  name                  = "${var.name_prefix}-http"
  load_balancing_scheme = "EXTERNAL_MANAGED"
  ip_address            = google_compute_global_address.api.id
  port_range            = "80"
  target                = google_compute_target_http_proxy.redirect.id
}
