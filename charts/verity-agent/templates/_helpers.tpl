{{/*
Names, labels, the shared environment of both programs, and the checks every template relies on.
The environment variable names the programs read are written here and in the two Deployments
only, once each.
*/}}

{{- define "verity-agent.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "verity-agent.fullname" -}}
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

{{- define "verity-agent.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{/* Labels of every resource; the component is added where one applies. */}}
{{- define "verity-agent.labels" -}}
helm.sh/chart: {{ include "verity-agent.chart" . }}
app.kubernetes.io/name: {{ include "verity-agent.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: verity
{{- with .Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Selector labels of one component: (dict "ctx" $ "component" "reporter"). */}}
{{- define "verity-agent.selectorLabels" -}}
app.kubernetes.io/name: {{ include "verity-agent.name" .ctx }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "verity-agent.componentName" -}}
{{- printf "%s-%s" (include "verity-agent.fullname" .ctx) .component | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "verity-agent.reporterServiceAccount" -}}
{{- default (include "verity-agent.componentName" (dict "ctx" . "component" "reporter")) .Values.reporter.serviceAccount.name -}}
{{- end -}}
{{- define "verity-agent.operatorServiceAccount" -}}
{{- default (include "verity-agent.componentName" (dict "ctx" . "component" "operator")) .Values.operator.serviceAccount.name -}}
{{- end -}}

{{- define "verity-agent.image" -}}
{{- $repository := required "image.repository is required: the chart names no default image. Build Dockerfile.reporter, push it to a registry you control and set image.repository (e.g. --set image.repository=registry.example.com/verity/verity-agent)" .Values.image.repository -}}
{{- if .Values.image.digest -}}
{{- printf "%s@%s" $repository .Values.image.digest -}}
{{- else -}}
{{- printf "%s:%s" $repository (default .Chart.AppVersion .Values.image.tag) -}}
{{- end -}}
{{- end -}}

{{- define "verity-agent.tokenSecretName" -}}
{{- default (printf "%s-token" (include "verity-agent.fullname" .)) .Values.token.existingSecret -}}
{{- end -}}
{{- define "verity-agent.tokenSecretKey" -}}
{{- if .Values.token.existingSecret -}}{{ .Values.token.existingSecretKey }}{{- else -}}token{{- end -}}
{{- end -}}

{{/* Environment both programs read: the API, the organization, the key file, the log level. */}}
{{- define "verity-agent.commonEnv" -}}
- name: VERITY_API_URL
  value: {{ .Values.api.url | quote }}
- name: VERITY_ORG
  value: {{ .Values.org | quote }}
- name: VERITY_API_TOKEN_FILE
  value: /var/run/secrets/verity/token
- name: LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* Volumes and mounts both programs use: the key and a writable /tmp. */}}
{{- define "verity-agent.commonVolumes" -}}
- name: tmp
  emptyDir:
    sizeLimit: 64Mi
- name: token
  secret:
    secretName: {{ include "verity-agent.tokenSecretName" . }}
    defaultMode: 0440
    items:
      - key: {{ include "verity-agent.tokenSecretKey" . }}
        path: token
{{- end -}}
{{- define "verity-agent.commonMounts" -}}
- name: tmp
  mountPath: /tmp
- name: token
  mountPath: /var/run/secrets/verity
  readOnly: true
{{- end -}}

{{/* Pod settings both Deployments share. */}}
{{- define "verity-agent.podCommon" -}}
automountServiceAccountToken: true
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- range . }}
  - name: {{ . }}
  {{- end }}
{{- end }}
{{- with .Values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
securityContext:
  {{- toYaml .Values.podSecurityContext | nindent 2 }}
{{- with .Values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.affinity }}
affinity:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .Values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* Liveness on /healthz and readiness on /readyz of the named port. */}}
{{- define "verity-agent.probes" -}}
livenessProbe:
  httpGet:
    path: /healthz
    port: http
  periodSeconds: 10
  timeoutSeconds: 3
  failureThreshold: 6
readinessProbe:
  httpGet:
    path: /readyz
    port: http
  periodSeconds: 10
  timeoutSeconds: 3
  failureThreshold: 3
{{- end -}}

{{- /*
The namespaces the operator watches, as a JSON list: operator.watchNamespaces and the names of
operator.namespaces, or the release namespace alone when both are empty. Not used cluster-wide.
*/ -}}
{{- define "verity-agent.operatorNamespaces" -}}
{{- $list := list -}}
{{- range .Values.operator.watchNamespaces }}{{ $list = append $list . }}{{ end -}}
{{- range .Values.operator.namespaces }}{{ $list = append $list .name }}{{ end -}}
{{- if not $list }}{{ $list = list .Release.Namespace }}{{ end -}}
{{- toJson $list -}}
{{- end -}}

{{- /* Where the key of each entry of operator.namespaces is mounted: <dir>/<namespace>/token. */ -}}
{{- define "verity-agent.namespaceTokensDir" -}}/var/run/secrets/verity-namespaces{{- end -}}

{{- /* VERITY_OPERATOR_NAMESPACES: each namespace's organization and key file, as JSON. */ -}}
{{- define "verity-agent.operatorNamespaceOrgs" -}}
{{- $dir := include "verity-agent.namespaceTokensDir" . -}}
{{- $list := list -}}
{{- range .Values.operator.namespaces -}}
{{- $list = append $list (dict "namespace" .name "org" .org "tokenFile" (printf "%s/%s/token" $dir .name)) -}}
{{- end -}}
{{- toJson $list -}}
{{- end -}}

{{- /*
The operator's rights: its three kinds with their status and finalizers, reading the Secrets
Actions reference (only those named in operator.secretNames when set), and recording events.
A Role and RoleBinding in each watched namespace; cluster-wide only with operator.clusterWide.
*/ -}}
{{- define "verity-agent.operatorRules" -}}
- apiGroups: ["verity.dev"]
  resources: ["environments", "policies", "actions"]
  verbs: ["get", "list", "watch", "update", "patch"]
- apiGroups: ["verity.dev"]
  resources: ["environments/status", "policies/status", "actions/status"]
  verbs: ["get", "update", "patch"]
- apiGroups: ["verity.dev"]
  resources: ["environments/finalizers", "policies/finalizers", "actions/finalizers"]
  verbs: ["update", "patch"]
- apiGroups: [""]
  resources: ["secrets"]
  verbs: ["get"]
  {{- with .Values.operator.secretNames }}
  resourceNames:
    {{- toYaml . | nindent 4 }}
  {{- end }}
- apiGroups: ["", "events.k8s.io"]
  resources: ["events"]
  verbs: ["create"]
{{- end }}

{{/* Combinations the chart refuses, each with the fix. */}}
{{- define "verity-agent.validate" -}}
{{- if or .Values.reporter.enabled .Values.operator.enabled -}}
{{- if not .Values.api.url -}}
{{- fail "api.url is empty: set the URL of the Verity API, e.g. http://verity.verity-system.svc:8080" -}}
{{- end -}}
{{- if not .Values.org -}}
{{- fail "org is empty: set the Verity organization the agent works for." -}}
{{- end -}}
{{- if and .Values.token.value .Values.token.existingSecret -}}
{{- fail "token.value and token.existingSecret are both set: use one of them." -}}
{{- end -}}
{{- if not (or .Values.token.value .Values.token.existingSecret) -}}
{{- fail "No API key: set token.existingSecret (a Secret with the key under token.existingSecretKey) or token.value." -}}
{{- end -}}
{{- end -}}
{{- if and .Values.reporter.enabled (not .Values.reporter.environments) -}}
{{- fail "reporter.environments is empty: name at least one environment and its namespaces, or set reporter.enabled=false." -}}
{{- end -}}
{{- if and .Values.operator.secretNames (not .Values.operator.enabled) -}}
{{- fail "operator.secretNames is set but the operator is disabled." -}}
{{- end -}}
{{- if and .Values.operator.enabled .Values.operator.clusterWide -}}
{{- if not .Values.operator.secretNames -}}
{{- fail "operator.clusterWide=true would let the operator read every Secret in the cluster: set operator.secretNames to the Secrets Actions reference, or list the namespaces in operator.watchNamespaces or operator.namespaces instead." -}}
{{- end -}}
{{- if or .Values.operator.watchNamespaces .Values.operator.namespaces -}}
{{- fail "operator.clusterWide=true watches every namespace: leave operator.watchNamespaces and operator.namespaces empty, or set operator.clusterWide=false." -}}
{{- end -}}
{{- end -}}
{{- if .Values.operator.enabled -}}
{{- $seen := dict -}}
{{- range (include "verity-agent.operatorNamespaces" . | fromJsonArray) -}}
{{- if hasKey $seen . -}}
{{- fail (printf "namespace %s is listed twice in operator.watchNamespaces and operator.namespaces: a namespace maps to one organization." .) -}}
{{- end -}}
{{- $_ := set $seen . true -}}
{{- end -}}
{{- end -}}
{{- end -}}
