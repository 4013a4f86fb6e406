//! Redaction rules for providers' token formats, hand-written from each provider's documentation
//! of its format (gitleaks' set, `redact_providers`, covers most of them too). Part of the
//! ordered rule table of `redact_rules` (`RULES`).

use super::redact_rule::{Rule, fixed};

pub(super) fn rules() -> Vec<Rule> {
    vec![
        // Known token shapes. OpenAI / Anthropic (sk-…, sk-proj-…, sk-ant-…).
        fixed(&["sk-"], r"(?-u)\bsk-[A-Za-z0-9_-]{16,}", b"[REDACTED]"),
        // GitHub.
        fixed(
            &["ghp_", "gho_", "ghu_", "ghs_", "ghr_"],
            r"(?-u)\bgh[pousr]_[A-Za-z0-9]{30,}\b",
            b"[REDACTED]",
        ),
        fixed(
            &["github_pat_"],
            r"(?-u)\bgithub_pat_[A-Za-z0-9_]{20,}",
            b"[REDACTED]",
        ),
        // GitLab, npm, PyPI, Hugging Face, Stripe secret and restricted keys.
        fixed(
            &["glpat-"],
            r"(?-u)\bglpat-[A-Za-z0-9_-]{20,}",
            b"[REDACTED]",
        ),
        fixed(&["npm_"], r"(?-u)\bnpm_[A-Za-z0-9]{36}\b", b"[REDACTED]"),
        // A Sentry DSN's key (docs.sentry.io, "Data Source Name"): the user part of its URL,
        // with the legacy secret after a colon.
        fixed(
            &["sentry.io"],
            r"(?i-u)(\bhttps?://)[0-9a-f]{16,64}(?::[0-9a-f]{16,64})?(@[a-z0-9.-]*\bsentry\.io\b)",
            b"${1}[REDACTED]${2}",
        ),
        fixed(
            &["pypi-"],
            r"(?-u)\bpypi-AgE[A-Za-z0-9_-]{50,}",
            b"[REDACTED]",
        ),
        fixed(&["hf_"], r"(?-u)\bhf_[A-Za-z0-9]{30,}\b", b"[REDACTED]"),
        fixed(
            &["k_live_", "k_test_"],
            r"(?-u)\b[rs]k_(?:live|test)_[A-Za-z0-9]{16,}",
            b"[REDACTED]",
        ),
        // AWS access key ids.
        fixed(
            &["akia", "asia"],
            r"(?-u)\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
            b"[REDACTED]",
        ),
        // Slack tokens and Google API keys.
        fixed(
            &["xox"],
            r"(?-u)\bxox[abposr]-[A-Za-z0-9-]{10,}",
            b"[REDACTED]",
        ),
        fixed(&["aiza"], r"(?-u)\bAIza[0-9A-Za-z_-]{35}", b"[REDACTED]"),
        // Slack app-level tokens (api.slack.com/authentication/token-types: xapp-).
        fixed(
            &["xapp-"],
            r"(?-u)\bxapp-[0-9]-[A-Za-z0-9-]{10,}",
            b"[REDACTED]",
        ),
        // Google OAuth: client secrets (GOCSPX-), access tokens (ya29.), refresh (1//).
        fixed(
            &["gocspx-"],
            r"(?-u)\bGOCSPX-[A-Za-z0-9_-]{20,}",
            b"[REDACTED]",
        ),
        fixed(
            &["ya29."],
            r"(?-u)\bya29\.[A-Za-z0-9_-]{20,}",
            b"[REDACTED]",
        ),
        // SendGrid API keys (docs.sendgrid.com: SG.<22>.<43>).
        fixed(
            &["sg."],
            r"(?-u)\bSG\.[A-Za-z0-9_-]{16,32}\.[A-Za-z0-9_-]{16,64}",
            b"[REDACTED]",
        ),
        // Twilio API keys (SK…) and account SIDs' auth pairs are caught by the URL and -u
        // rules; the key SID itself: SK + 32 hex.
        fixed(
            &[
                "sk0", "sk1", "sk2", "sk3", "sk4", "sk5", "sk6", "sk7", "sk8", "sk9", "ska", "skb",
                "skc", "skd", "ske", "skf",
            ],
            r"(?-u)\bSK[0-9a-f]{32}\b",
            b"[REDACTED]",
        ),
        // Mailgun (key-…), Mailchimp (…-usN), Shopify (shpat_/shpss_/shpca_/shppa_),
        // DigitalOcean (dop_v1_/doo_v1_/dor_v1_), Databricks (dapi…), HashiCorp Vault
        // (hvs./hvb.), Linear (lin_api_), Postman (PMAK-), Doppler (dp.pt.), Pulumi (pul-),
        // New Relic (NRAK-), Grafana (glc_/glsa_), Sentry (sntrys_), Square (sq0atp-/sq0csp-),
        // Atlassian (ATATT3), age (AGE-SECRET-KEY-1), Telegram bot tokens (id:AA…).
        fixed(&["key-"], r"(?-u)\bkey-[0-9a-zA-Z]{32}\b", b"[REDACTED]"),
        fixed(
            &["-us"],
            r"(?-u)\b[0-9a-f]{32}-us[0-9]{1,2}\b",
            b"[REDACTED]",
        ),
        fixed(
            &["shp"],
            r"(?-u)\bshp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}\b",
            b"[REDACTED]",
        ),
        fixed(
            &["_v1_"],
            r"(?-u)\bdo[opr]_v1_[a-f0-9]{64}\b",
            b"[REDACTED]",
        ),
        fixed(
            &["dapi"],
            r"(?-u)\bdapi[a-f0-9]{32}(?:-[0-9])?\b",
            b"[REDACTED]",
        ),
        fixed(
            &["hvs.", "hvb."],
            r"(?-u)\bhv[sb]\.[A-Za-z0-9_-]{24,}",
            b"[REDACTED]",
        ),
        fixed(
            &["lin_api_"],
            r"(?-u)\blin_api_[A-Za-z0-9]{40}\b",
            b"[REDACTED]",
        ),
        fixed(
            &["pmak-"],
            r"(?-u)\bPMAK-[a-f0-9]{24}-[a-f0-9]{34}\b",
            b"[REDACTED]",
        ),
        fixed(
            &["dp."],
            r"(?-u)\bdp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,}",
            b"[REDACTED]",
        ),
        fixed(&["pul-"], r"(?-u)\bpul-[a-f0-9]{40}\b", b"[REDACTED]"),
        fixed(&["nrak-"], r"(?-u)\bNRAK-[A-Z0-9]{27}\b", b"[REDACTED]"),
        fixed(
            &["glc_", "glsa_"],
            r"(?-u)\bgl(?:c|sa)_[A-Za-z0-9+/_]{32,}={0,2}",
            b"[REDACTED]",
        ),
        fixed(
            &["sntry"],
            r"(?-u)\bsntry[su]_[A-Za-z0-9+/=_]{40,}",
            b"[REDACTED]",
        ),
        fixed(
            &["sq0"],
            r"(?-u)\bsq0(?:atp|csp)-[0-9A-Za-z_-]{22,43}",
            b"[REDACTED]",
        ),
        fixed(
            &["atatt3"],
            r"(?-u)\bATATT3[A-Za-z0-9_=-]{40,}",
            b"[REDACTED]",
        ),
        fixed(
            &["age-secret-key-1"],
            r"(?-u)\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b",
            b"[REDACTED]",
        ),
        fixed(
            &[":aa"],
            r"(?-u)\b[0-9]{8,10}:AA[0-9A-Za-z_-]{30,36}\b",
            b"[REDACTED]",
        ),
        // More providers' token prefixes. Those whose tokens are letters and digits, 20 or
        // more after the prefix (so `gsk_model_training` or `rnd_seed` stay): Sourcegraph
        // (sgp_), Groq (gsk_), Replicate (r8_), Perplexity (pplx-), xAI (xai-), Supabase
        // (sbp_), Netlify (nfp_), RubyGems (rubygems_), Render (rnd_).
        fixed(
            &[
                "sgp_",
                "gsk_",
                "r8_",
                "pplx-",
                "xai-",
                "sbp_",
                "nfp_",
                "rubygems_",
                "rnd_",
            ],
            r"(?-u)\b(?:sgp_|gsk_|r8_|pplx-|xai-|sbp_|nfp_|rubygems_|rnd_)[A-Za-z0-9]{20,}",
            b"[REDACTED]",
        ),
        // Those whose tokens hold `_` or `-` too, behind prefixes no identifier has: Docker
        // Hub PATs (dckr_pat_), PlanetScale (pscale_tkn_/pw_/oauth_), Figma (figd_), GitLab's
        // other tokens (glptt-, gldt-, glrt-, glcbt-, glimt-, glsoat-), Fly.io (fo1_).
        fixed(
            &[
                "dckr_pat_",
                "pscale_",
                "figd_",
                "glptt-",
                "gldt-",
                "glrt-",
                "glcbt-",
                "glimt-",
                "glsoat-",
                "fo1_",
            ],
            r"(?-u)\b(?:dckr_pat_|pscale_(?:tkn|pw|oauth)_|figd_|glptt-|gldt-|glrt-|glcbt-|glimt-|glsoat-|fo1_)[A-Za-z0-9_=-]{20,}",
            b"[REDACTED]",
        ),
        // Prefixes gitleaks' set lacks: Sourcegraph's `sgp_<16 hex>_<40 hex>`, Tavily
        // (tvly-), Dependency-Track (odt_), Jina (jina_), Adafruit IO (aio_), crates.io
        // (cio), NuGet (oy2), New Relic's license, admin, insert and query keys
        // (…NRAL, NRAA-, NRII-, NRIQ-) and Pixie's (px-api-, px-dep-), a Twitch stream key
        // (live_<id>_…), a Salesforce session id (00D…!…), an Azure DevOps PAT (…AZDO…),
        // Doppler's environment tokens (dp.st.<env>.…).
        fixed(
            &[
                "sgp_", "tvly-", "odt_", "jina_", "aio_", "cio", "oy2", "nral", "nraa-", "nrii-",
                "nriq-", "live_", "00d", "azdo", "dp.st.", "px-api-", "px-dep-",
            ],
            r"(?-u)\b(?:sgp_(?:[a-f0-9]{16}|local)_[a-f0-9]{40}|tvly-[A-Za-z0-9]{32}|odt_[A-Za-z0-9]{32,40}|jina_[a-f0-9]{32}[A-Za-z0-9]{24,40}|aio_[A-Za-z0-9]{28}|cio[A-Za-z0-9]{32}|oy2[a-z0-9]{43}|[a-z0-9]{36}NRAL|NRAA-[a-f0-9]{27}|NRI[IQ]-[A-Za-z0-9_-]{32}|live_[0-9]{6,12}_[A-Za-z0-9]{30}|00D[A-Za-z0-9]{12,15}![A-Za-z0-9._]{80,}|[A-Za-z0-9]{76}AZDO[A-Za-z0-9]{4}|px-(?:api|dep)-[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}|dp\.st\.[a-z0-9_-]{1,32}\.[A-Za-z0-9]{40,})\b",
            b"[REDACTED]",
        ),
        // Webhook URLs whose path is the secret, older shapes: Teams' outlook.office.com
        // connectors, ThingsBoard device tokens (`/api/v1/<token>/telemetry`).
        fixed(
            &["outlook.office", "thingsboard"],
            r"(?i-u)\b(https?://outlook\.office(?:365)?\.com/webhook/|(?:https?|coap)://[a-z0-9.-]*thingsboard[a-z0-9.-]*(?::[0-9]+)?/api/v1/)[A-Za-z0-9@/_-]+",
            b"${1}[REDACTED]",
        ),
    ]
}
