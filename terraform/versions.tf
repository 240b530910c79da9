# Sluice on Google Cloud: see DEPLOY.md. Build first (`npm run build`): the functions'
# source archives are read from ../dist/functions/.
terraform {
  required_version = ">= 1.5"
  required_providers {
    google = {
      source  = "hashicorp/google"
      version = ">= 6.0, < 8.0"
    }
  }
}

provider "google" {
  project = var.project_id
  region  = var.region
}

data "google_project" "this" {}
