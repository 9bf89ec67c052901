{{/*
Names, labels and the checks every template relies on. Names follow the helm create starter:
the full name is "<release>-<chart>" unless the release name already holds the chart name.
*/}}

{{- define "verity.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "verity.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- $name := default .Chart.Name .Values.nameOverride -}}
{{- if contains $name .Release.Name -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name $name | trunc 63 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{- define "verity.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "verity.selectorLabels" -}}
app.kubernetes.io/name: {{ include "verity.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: api
{{- end -}}

{{/* The label that tells the metrics Service from the API's (the ServiceMonitor selects it). */}}
{{- define "verity.metricsServiceLabels" -}}
verity.dev/service: metrics
{{- end -}}

{{- define "verity.labels" -}}
helm.sh/chart: {{ include "verity.chart" . }}
{{ include "verity.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: verity
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{- define "verity.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "verity.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "verity.image" -}}
{{- $repository := required "image.repository is required: the chart names no default image. Build Dockerfile.api, push it to a registry you control and set image.repository (e.g. --set image.repository=registry.example.com/verity/verity-api)" .Values.image.repository -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" $repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" $repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{/* True (non-empty) when the API uses PostgreSQL rather than the embedded database. */}}
{{- define "verity.postgres" -}}
{{- if or .Values.database.url .Values.database.existingSecret -}}true{{- end -}}
{{- end -}}

{{/* Secret holding the PostgreSQL URL, and its key. */}}
{{- define "verity.databaseSecretName" -}}
{{- default (printf "%s-database" (include "verity.fullname" .)) .Values.database.existingSecret -}}
{{- end -}}
{{- define "verity.databaseSecretKey" -}}
{{- if .Values.database.existingSecret -}}{{ .Values.database.existingSecretKey }}{{- else -}}database-url{{- end -}}
{{- end -}}

{{/* Secret holding the bootstrap admin key, and its key. */}}
{{- define "verity.bootstrapSecretName" -}}
{{- default (printf "%s-bootstrap" (include "verity.fullname" .)) .Values.bootstrap.existingSecret -}}
{{- end -}}
{{- define "verity.bootstrapSecretKey" -}}
{{- if .Values.bootstrap.existingSecret -}}{{ .Values.bootstrap.existingSecretKey }}{{- else -}}api-key{{- end -}}
{{- end -}}

{{/* True (non-empty) when the chart generates the bootstrap key into its Secret. */}}
{{- define "verity.bootstrapKeyGenerated" -}}
{{- if and .Values.bootstrap.generateKey (not .Values.bootstrap.apiKey) (not .Values.bootstrap.existingSecret) -}}true{{- end -}}
{{- end -}}

{{/* True (non-empty) when the pod reads a bootstrap key from a Secret. */}}
{{- define "verity.bootstrapKeyMounted" -}}
{{- if or .Values.bootstrap.apiKey .Values.bootstrap.existingSecret (include "verity.bootstrapKeyGenerated" .) -}}true{{- end -}}
{{- end -}}

{{/* The bootstrap organization: as set, or the API's default one for a generated key. */}}
{{- define "verity.bootstrapOrg" -}}
{{- if .Values.bootstrap.org -}}{{ .Values.bootstrap.org }}{{- else if include "verity.bootstrapKeyGenerated" . -}}default{{- end -}}
{{- end -}}

{{/*
The generated bootstrap key: the one already in the release's Secret (kept across upgrades),
else a new random one. It reaches the pod as a file, never the log.
*/}}
{{- define "verity.generatedBootstrapKey" -}}
{{- $existing := lookup "v1" "Secret" .Release.Namespace (include "verity.bootstrapSecretName" .) -}}
{{- if and $existing $existing.data (hasKey $existing.data "api-key") -}}
{{- index $existing.data "api-key" | b64dec -}}
{{- else -}}
{{- printf "vty_%s" (randAlphaNum 43) -}}
{{- end -}}
{{- end -}}

{{/* Secret holding SMTP_URL, and its key. */}}
{{- define "verity.smtpSecretName" -}}
{{- default (printf "%s-smtp" (include "verity.fullname" .)) .Values.notifications.smtp.existingSecret -}}
{{- end -}}
{{- define "verity.smtpSecretKey" -}}
{{- if .Values.notifications.smtp.existingSecret -}}{{ .Values.notifications.smtp.existingSecretKey }}{{- else -}}smtp-url{{- end -}}
{{- end -}}

{{/* Secret holding the metrics token, and its key; empty when no token is set. */}}
{{- define "verity.metricsTokenSet" -}}
{{- if or .Values.metrics.token .Values.metrics.existingSecret -}}true{{- end -}}
{{- end -}}
{{- define "verity.metricsSecretName" -}}
{{- default (printf "%s-metrics" (include "verity.fullname" .)) .Values.metrics.existingSecret -}}
{{- end -}}
{{- define "verity.metricsSecretKey" -}}
{{- if .Values.metrics.existingSecret -}}{{ .Values.metrics.existingSecretKey }}{{- else -}}metrics-token{{- end -}}
{{- end -}}

{{/* Secret holding the identity provider's client secret, and its key; empty when none is set. */}}
{{- define "verity.oidcClientSecretSet" -}}
{{- if or .Values.auth.oidc.clientSecret .Values.auth.oidc.existingSecret -}}true{{- end -}}
{{- end -}}
{{- define "verity.oidcSecretName" -}}
{{- default (printf "%s-oidc" (include "verity.fullname" .)) .Values.auth.oidc.existingSecret -}}
{{- end -}}
{{- define "verity.oidcSecretKey" -}}
{{- if .Values.auth.oidc.existingSecret -}}{{ .Values.auth.oidc.existingSecretKey }}{{- else -}}client-secret{{- end -}}
{{- end -}}

{{/*
Certificates outbound https trusts besides the system's: "configMap" or "secret" (where they
are), empty when none is set. The chart's own ConfigMap when given inline.
*/}}
{{- define "verity.outboundCaSource" -}}
{{- $ca := .Values.config.outboundCa -}}
{{- if $ca.existingSecret -}}secret{{- else if or $ca.existingConfigMap (trim $ca.certificates) -}}configMap{{- end -}}
{{- end -}}
{{- define "verity.outboundCaName" -}}
{{- $ca := .Values.config.outboundCa -}}
{{- if $ca.existingSecret -}}{{ $ca.existingSecret }}{{- else -}}{{ default (printf "%s-outbound-ca" (include "verity.fullname" .)) $ca.existingConfigMap }}{{- end -}}
{{- end -}}
{{- define "verity.outboundCaKey" -}}
{{- if or .Values.config.outboundCa.existingSecret .Values.config.outboundCa.existingConfigMap -}}{{ .Values.config.outboundCa.existingKey }}{{- else -}}ca.crt{{- end -}}
{{- end -}}

{{/*
Signed-evidence trust material: "true" when the trusted root (sigstoreRoot) or the public keys
(sigstoreKeys) are set, inline (the chart's own ConfigMap) or in an existing ConfigMap.
*/}}
{{- define "verity.sigstoreRoot" -}}
{{- $s := .Values.config.sigstore -}}
{{- if $s.existingConfigMap -}}{{- if $s.existingTrustedRootKey -}}true{{- end -}}{{- else if trim $s.trustedRoot -}}true{{- end -}}
{{- end -}}
{{- define "verity.sigstoreKeys" -}}
{{- $s := .Values.config.sigstore -}}
{{- if $s.existingConfigMap -}}{{- if $s.existingPublicKeysKey -}}true{{- end -}}{{- else if trim $s.publicKeys -}}true{{- end -}}
{{- end -}}
{{- define "verity.sigstoreName" -}}
{{- default (printf "%s-sigstore" (include "verity.fullname" .)) .Values.config.sigstore.existingConfigMap -}}
{{- end -}}

{{/* auth.oidc.insecureIssuers as the API compares them: comma-separated, no trailing slash. */}}
{{- define "verity.insecureIssuers" -}}
{{- $issuers := list -}}
{{- range .Values.auth.oidc.insecureIssuers -}}
{{- $issuers = append $issuers (regexReplaceAll "/+$" (trim .) "") -}}
{{- end -}}
{{- join "," $issuers -}}
{{- end -}}

{{/* The PersistentVolumeClaim of the embedded database. */}}
{{- define "verity.claimName" -}}
{{- default (printf "%s-data" (include "verity.fullname" .)) .Values.persistence.existingClaim -}}
{{- end -}}

{{/*
Combinations the chart refuses, each with the fix. Called from the Deployment, so a refused
value set fails `helm install`, `helm template` and `helm lint` alike.
*/}}
{{- define "verity.validate" -}}
{{- if and .Values.database.url .Values.database.existingSecret -}}
{{- fail "database.url and database.existingSecret are both set: use one of them." -}}
{{- end -}}
{{- if and .Values.bootstrap.apiKey .Values.bootstrap.existingSecret -}}
{{- fail "bootstrap.apiKey and bootstrap.existingSecret are both set: use one of them." -}}
{{- end -}}
{{- if and (or .Values.bootstrap.apiKey .Values.bootstrap.existingSecret) (not .Values.bootstrap.org) -}}
{{- fail "bootstrap.apiKey/existingSecret needs bootstrap.org: the organization the key administers." -}}
{{- end -}}
{{- if and .Values.notifications.smtp.url .Values.notifications.smtp.existingSecret -}}
{{- fail "notifications.smtp.url and notifications.smtp.existingSecret are both set: use one of them." -}}
{{- end -}}
{{- if and (eq .Values.evidenceStore.type "s3") (not .Values.evidenceStore.s3.bucket) -}}
{{- fail "evidenceStore.type s3 needs evidenceStore.s3.bucket: the bucket that keeps evidence files." -}}
{{- end -}}
{{- if and .Values.evidenceStore.s3.kmsKeyId (ne .Values.evidenceStore.s3.sse "aws:kms") -}}
{{- fail "evidenceStore.s3.kmsKeyId needs evidenceStore.s3.sse aws:kms: the key encrypts objects only under SSE-KMS." -}}
{{- end -}}
{{- if and .Values.auth.oidc.issuer (not .Values.auth.oidc.clientId) -}}
{{- fail "auth.oidc.issuer needs auth.oidc.clientId: Verity's client at that identity provider." -}}
{{- end -}}
{{- if and .Values.auth.oidc.clientSecret .Values.auth.oidc.existingSecret -}}
{{- fail "auth.oidc.clientSecret and auth.oidc.existingSecret are both set: use one of them." -}}
{{- end -}}
{{- if and (hasPrefix "http://" .Values.auth.oidc.issuer) (not (has (regexReplaceAll "/+$" .Values.auth.oidc.issuer "") (include "verity.insecureIssuers" . | splitList ","))) -}}
{{- fail (printf "auth.oidc.issuer %s is http: use https, or name it in auth.oidc.insecureIssuers (tests and air-gapped labs only)." .Values.auth.oidc.issuer) -}}
{{- end -}}
{{- $ca := .Values.config.outboundCa -}}
{{- if gt (len (compact (list (trim $ca.certificates) $ca.existingConfigMap $ca.existingSecret))) 1 -}}
{{- fail "config.outboundCa: set one of certificates, existingConfigMap and existingSecret." -}}
{{- end -}}
{{- $sig := .Values.config.sigstore -}}
{{- if and $sig.existingConfigMap (or (trim $sig.trustedRoot) (trim $sig.publicKeys)) -}}
{{- fail "config.sigstore: set trustedRoot/publicKeys or existingConfigMap, not both." -}}
{{- end -}}
{{- if not (include "verity.postgres" .) -}}
{{- if not .Values.persistence.enabled -}}
{{- fail "No database: set database.url or database.existingSecret (PostgreSQL), or persistence.enabled=true (the embedded database on a volume)." -}}
{{- end -}}
{{- if gt (int .Values.replicaCount) 1 -}}
{{- fail (printf "replicaCount=%d with the embedded database: it serves one replica only. Set replicaCount=1, or use PostgreSQL (database.url or database.existingSecret)." (int .Values.replicaCount)) -}}
{{- end -}}
{{- if .Values.autoscaling.enabled -}}
{{- fail "autoscaling.enabled with the embedded database: it serves one replica only. Use PostgreSQL (database.url or database.existingSecret) to scale." -}}
{{- end -}}
{{- end -}}
{{- if and .Values.autoscaling.enabled (gt (int .Values.autoscaling.minReplicas) (int .Values.autoscaling.maxReplicas)) -}}
{{- fail "autoscaling.minReplicas is greater than autoscaling.maxReplicas." -}}
{{- end -}}
{{- end -}}
