{{/* Names and labels. */}}
{{- define "ingress-controller.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{- define "ingress-controller.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else if contains (include "ingress-controller.name" .) .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "ingress-controller.name" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "ingress-controller.selectorLabels" -}}
app.kubernetes.io/name: {{ include "ingress-controller.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/component: controller
{{- end }}

{{/* Helm's standard labels. Never app.kubernetes.io/managed-by=ingress-controller: that marks what the controller itself creates. */}}
{{- define "ingress-controller.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "ingress-controller.selectorLabels" . }}
app.kubernetes.io/version: {{ (include "ingress-controller.release" . | fromJson).version | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* The chosen release's entry of _releases.tpl (JSON), or a failure naming the value. */}}
{{- define "ingress-controller.release" -}}
{{- $all := include "ingress-controller.releases" . | fromJson }}
{{- $r := toString .Values.release }}
{{- if not (hasKey $all $r) }}
{{- fail (printf "release: %q is not a release; use one of %s" $r (keys $all | sortAlpha | join ", ")) }}
{{- end }}
{{- get $all $r | toJson }}
{{- end }}

{{- define "ingress-controller.image" -}}
{{- $rel := include "ingress-controller.release" . | fromJson }}
{{- printf "%s/ingress-controller:%s" (trimSuffix "/" .Values.image.registry) (default $rel.controllerTag .Values.image.tag) }}
{{- end }}

{{/* One option value as the command line writes it (integers without an exponent). */}}
{{- define "ingress-controller.scalar" -}}
{{- if and (kindIs "float64" .) (eq (float64 (int64 .)) .) }}{{ int64 . }}{{ else }}{{ toString . }}{{ end }}
{{- end }}

{{- define "ingress-controller.securePort" -}}
{{- $o := .Values.controller.options }}
{{- include "ingress-controller.scalar" (index $o "secure-port" | default 443) }}
{{- end }}

{{/* Where the kubelet probes: A's secure port (HTTPS), or B's/C's plain-HTTP ops listener. */}}
{{- define "ingress-controller.probe" -}}
{{- $o := .Values.controller.options }}
{{- $release := toString .Values.release }}
{{- if eq $release "A" }}
scheme: HTTPS
port: {{ include "ingress-controller.securePort" . }}
{{- else }}
{{- $addr := toString (index $o (ternary "ops-address" "address" (eq $release "B")) | default ":56790") }}
scheme: HTTP
port: {{ regexReplaceAll "^.*:" $addr "" }}
{{- end }}
{{- end }}

{{/*
The options of `run`: controller.options over the chart's own settings, checked against the
release's option names, as JSON {name: [value, …]} (a list option holds each item).
*/}}
{{- define "ingress-controller.options" -}}
{{- $rel := include "ingress-controller.release" . | fromJson }}
{{- $opts := deepCopy (.Values.controller.options | default dict) }}
{{- $_ := set $opts "operator-service" (index $opts "operator-service" | default (include "ingress-controller.fullname" .)) }}
{{- if and .Values.ingressClass.create (not (hasKey $opts "ingress-class")) }}
{{- $_ := set $opts "ingress-class" .Values.ingressClass.name }}
{{- end }}
{{- if and (ne (trimSuffix "/" .Values.image.registry) $rel.registry) (not (hasKey $opts "image-registry")) }}
{{- $_ := set $opts "image-registry" (trimSuffix "/" .Values.image.registry) }}
{{- end }}
{{- if and (eq (toString .Values.release) "A") (not (hasKey $opts "authorization-always-allow-paths")) }}
{{- $_ := set $opts "authorization-always-allow-paths" (list "/healthz" "/readyz" "/livez") }}
{{- end }}
{{- if .Values.audit.enabled }}
{{- $_ := set $opts "audit-policy-file" "/etc/ingress-controller/audit/policy.yaml" }}
{{- $_ := set $opts "audit-log-path" .Values.audit.logPath }}
{{- end }}
{{- if .Values.webhook.enabled }}
{{- if ne (toString .Values.release) "A" }}
{{- fail "webhook.enabled: the validating webhook exists only in release A" }}
{{- end }}
{{- $_ := set $opts "enable-validating-webhook" true }}
{{- $_ := set $opts "tls-cert-file" "/etc/ingress-controller/webhook-tls/tls.crt" }}
{{- $_ := set $opts "tls-private-key-file" "/etc/ingress-controller/webhook-tls/tls.key" }}
{{- end }}
{{- if .Values.gatewayAPI.proxiesInGatewayNamespace }}
{{- if not .Values.gatewayAPI.enabled }}
{{- fail "gatewayAPI.proxiesInGatewayNamespace: needs gatewayAPI.enabled (it places the Gateways' proxies)" }}
{{- end }}
{{- $_ := set $opts "gateway-proxies-in-gateway-namespace" true }}
{{- end }}
{{- $out := dict }}
{{- range $name, $v := $opts }}
{{- if not (has $name $rel.options) }}
{{- fail (printf "controller.options.%s: not an option of release %s (see the options listed in values.yaml)" $name $.Values.release) }}
{{- end }}
{{- if kindIs "slice" $v }}
{{- $items := list }}
{{- range $v }}{{ $items = append $items (include "ingress-controller.scalar" .) }}{{ end }}
{{- $_ := set $out $name $items }}
{{- else if not (kindIs "invalid" $v) }}
{{- $_ := set $out $name (list (include "ingress-controller.scalar" $v)) }}
{{- end }}
{{- end }}
{{- toJson $out }}
{{- end }}

{{/* The controller's --ingress-class, or "" when it runs without one (it then handles every class). */}}
{{- define "ingress-controller.ingressClass" -}}
{{- $opts := include "ingress-controller.options" . | fromJson }}
{{- index $opts "ingress-class" | default list | first | default "" }}
{{- end }}

{{/*
The name of the shared proxy of --ingress-class, as lib/controller/groups.ts's sharedProxyName
makes it (a chart test compares them); "" without --ingress-class: the controller may then run a
shared proxy for any class, so no name is known in advance.
*/}}
{{- define "ingress-controller.sharedProxyName" -}}
{{- $class := include "ingress-controller.ingressClass" . }}
{{- if ne $class "" }}
{{- $name := printf "haproxy-class-%s" $class }}
{{- if and (regexMatch "^[a-z]([-a-z0-9]*[a-z0-9])?$" $name) (le (len $name) 55) }}
{{- $name }}
{{- else }}
{{- printf "haproxy-class-%s" (sha256sum $class | trunc 10) }}
{{- end }}
{{- end }}
{{- end }}

{{/*
The value of the label ingress-controller.io/controller on the objects the controller makes: its
--ingress-class or "default", as lib/controller/objects.ts's controllerLabelValue writes it.
*/}}
{{- define "ingress-controller.controllerLabel" -}}
{{- $id := include "ingress-controller.ingressClass" . | default "default" }}
{{- if and (regexMatch "^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$" $id) (le (len $id) 63) }}
{{- $id }}
{{- else }}
{{- printf "h-%s" (sha256sum $id | trunc 16) }}
{{- end }}
{{- end }}
