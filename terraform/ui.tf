# The web UI: the static files `npm run build` writes to dist/web (index.html and
# assets/), in a bucket served by the API's load balancer as a backend bucket. The URL
# map sends every path outside /api/... to it, and /api/docs (the UI's API reference).
#
# The UI is a single-page app: its pages (/context, /workers/<id>, ...) all answer
# with index.html. The fixed ones are objects of their own (200); /workers/<id> and
# /jobs/<name> fall back to index.html through the bucket's not_found_page (status 404,
# which the browser renders all the same). The files hold no secrets: the bucket is
# publicly readable, which a backend bucket requires.

locals {
  web_files = fileset(var.web_dir, "**")
  web_content_types = {
    html = "text/html; charset=utf-8"
    js   = "text/javascript; charset=utf-8"
    css  = "text/css; charset=utf-8"
    svg  = "image/svg+xml"
  }
  # Pages without a parameter: web/src/routes.ts PAGE_PATHS (check:deploy compares).
  web_pages = ["context", "workers", "jobs", "events", "login", "api/docs"]
  # Same policy as the local stack (web/serve.ts CONTENT_SECURITY_POLICY; check:deploy compares).
  web_csp = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
}

resource "google_storage_bucket" "web" {
  name                        = "${var.project_id}-${var.name_prefix}-web"
  location                    = var.region
  uniform_bucket_level_access = true
  force_destroy               = true

  website {
    main_page_suffix = "index.html"
    not_found_page   = "index.html"
  }
}

# Anyone may read an object by its name (the backend bucket needs it), not list the bucket.
resource "google_storage_bucket_iam_member" "web_public" {
  bucket = google_storage_bucket.web.name
  role   = "roles/storage.legacyObjectReader"
  member = "allUsers"
}

resource "google_storage_bucket_object" "web" {
  for_each      = local.web_files
  bucket        = google_storage_bucket.web.name
  name          = each.value
  source        = "${var.web_dir}/${each.value}"
  content_type  = lookup(local.web_content_types, reverse(split(".", each.value))[0], "application/octet-stream")
  cache_control = "no-cache"
}

resource "google_storage_bucket_object" "web_page" {
  for_each      = toset(local.web_pages)
  bucket        = google_storage_bucket.web.name
  name          = each.value
  source        = "${var.web_dir}/index.html"
  content_type  = local.web_content_types.html
  cache_control = "no-cache"
}

resource "google_compute_backend_bucket" "web" {
  name        = "${var.name_prefix}-web"
  bucket_name = google_storage_bucket.web.name
  enable_cdn  = false
  custom_response_headers = [
    "Content-Security-Policy: ${local.web_csp}",
    "X-Content-Type-Options: nosniff",
    "Referrer-Policy: no-referrer",
    "X-Frame-Options: DENY",
    "Strict-Transport-Security: max-age=31536000; includeSubDomains",
  ]
}
