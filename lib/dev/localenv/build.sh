#!/usr/bin/env bash
# Builds the test environment's binaries from their Go modules (pinned in lib/dev/localenv/go/*/go.mod)
# into a cache outside the repository, and reuses that cache afterwards. Prints the directory
# holding them as its last stdout line; progress goes to stderr.
#
#   lib/dev/localenv/build.sh                 kube-apiserver and etcd: build when missing, print the directory
#   lib/dev/localenv/build.sh echo pause …    the named binaries instead (see `known` below; `helm` is helm v3)
#   KUBEBUILDER_ASSETS=/dir …             (no names) use /dir/{kube-apiserver,etcd}, build nothing
#   lib/dev/localenv/build.sh conformance.test echo-basic coredns gateway-crds
#                                         the Gateway API conformance suite's parts (go/gateway-api, go/coredns),
#                                         cached per Gateway API version in a directory of their own; not mixed
#                                         with the others in one call. gateway-crds is a directory: crds/standard/.
#
# Nothing prebuilt is downloaded: only Go modules, through the machine's Go toolchain.
set -euo pipefail

K8S_VERSION=v1.34.4
ETCD_VERSION=v3.6.16

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
say() { printf '[testenv build] %s\n' "$*" >&2; }

gateway_known="conformance.test echo-basic coredns gateway-crds"
known="etcd kube-apiserver kubelet kube-controller-manager kube-scheduler kube-proxy echo pause helm $gateway_known"
targets=("$@")
gateway_targets=0
for t in "${targets[@]}"; do
  if [[ " $known " != *" $t "* ]]; then
    say "unknown binary $t (known: $known)"
    exit 2
  fi
  [[ " $gateway_known " == *" $t "* ]] && gateway_targets=$((gateway_targets + 1))
done
if [[ $gateway_targets -gt 0 && $gateway_targets -ne ${#targets[@]} ]]; then
  say "build $gateway_known in a call of their own (they are cached in another directory)"
  exit 2
fi

if [[ ${#targets[@]} -eq 0 && -n "${KUBEBUILDER_ASSETS:-}" ]]; then
  for bin in kube-apiserver etcd; do
    if [[ ! -x "$KUBEBUILDER_ASSETS/$bin" ]]; then
      say "KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS has no executable $bin; put kube-apiserver and etcd there or unset it"
      exit 1
    fi
  done
  say "using KUBEBUILDER_ASSETS=$KUBEBUILDER_ASSETS"
  printf '%s\n' "$KUBEBUILDER_ASSETS"
  exit 0
fi

GATEWAY_API_VERSION="$(awk '$1 == "sigs.k8s.io/gateway-api" { print $2 }' "$here/go/gateway-api/go.mod")"
cache="${XDG_CACHE_HOME:-$HOME/.cache}/ingress-controller"
if [[ $gateway_targets -gt 0 ]]; then
  out="$cache/gateway-api/$GATEWAY_API_VERSION"
  # The suite's parts are big and not on the tests' path: built slowly, one package at a time, so
  # they never crowd out other work on a small machine.
  go_nice=(nice -n 10)
  go_p=(-p 1)
else
  out="$cache/testenv/$K8S_VERSION"
  go_nice=()
  go_p=()
fi
mkdir -p "$out"

# A stamp of the pinned module files: editing a go.mod rebuilds the binary it describes. Whole-line
# comments are left out, so editing a go.mod's explanation never forces a rebuild.
stamp_of() {
  { cat "$here/go/$1/go.mod" "$here/go/$1"/*.go "$here/go/$1/go.sum" 2>/dev/null || true; } |
    grep -Ev '^[[:space:]]*//' | sha256sum | cut -c1-16
}

started=$SECONDS

# build <name> <module dir> <package> <ldflags> [test]: `go build` the package, or with `test`
# `go test -c` it (the package's test binary).
build() {
  local name=$1 dir=$2 pkg=$3 ldflags=$4 kind=${5:-build}
  local stamp
  stamp="$(stamp_of "$dir")"
  # Parallel processes may all ask for a binary: one builds it, the others wait and reuse it.
  # One lock per module directory, so a long node build never holds up the control plane's binaries.
  exec 9>"$out/.lock-$dir"
  flock 9
  if [[ -x "$out/$name" && "$(cat "$out/$name.stamp" 2>/dev/null)" == "$stamp" ]]; then
    say "$name: cached at $out/$name"
    flock -u 9
    return
  fi
  if ! command -v go >/dev/null 2>&1; then
    say "the Go toolchain (go >= 1.24) is needed to build $name; install it (https://go.dev/dl) or set KUBEBUILDER_ASSETS"
    exit 1
  fi
  local t0=$SECONDS
  say "$name: downloading modules ($dir/go.mod)"
  (cd "$here/go/$dir" && GOFLAGS="-mod=mod -buildvcs=false" go mod download)
  local cmd=(go build -v)
  [[ $kind == test ]] && cmd=(go test -c)
  say "$name: modules ready after $((SECONDS - t0))s; compiling $pkg (${cmd[*]})"
  local tmp="$out/.$name.tmp.$$"
  # `go build -v` names each package as it compiles it (no spaces); anything else is a message.
  # `go test -c` names none: a line every minute says it is still at work.
  local ticker=""
  if [[ $kind == test ]]; then
    (while sleep 60 </dev/null >/dev/null 2>&1; do say "$name: still compiling after $((SECONDS - t0))s"; done) >/dev/null &
    ticker=$!
  fi
  set +e
  (cd "$here/go/$dir" && CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false" "${go_nice[@]}" "${cmd[@]}" "${go_p[@]}" -trimpath -ldflags "-s -w $ldflags" -o "$tmp" "$pkg") 2>&1 |
    awk -v name="$name" '
      / / { print > "/dev/stderr"; next }
      { n++; if (n % 100 == 0) { printf "[testenv build] %s: %d packages compiled\n", name, n > "/dev/stderr" } }
      END { if (n > 0) printf "[testenv build] %s: %d packages compiled in total\n", name, n > "/dev/stderr" }'
  local rc=${PIPESTATUS[0]}
  set -e
  [[ -n $ticker ]] && kill "$ticker" 2>/dev/null
  if [[ $rc -ne 0 || ! -x "$tmp" ]]; then
    rm -f "$tmp"
    say "$name: build failed (see the compiler output above)"
    exit 1
  fi
  mv -f "$tmp" "$out/$name"
  stamp_of "$dir" >"$out/$name.stamp" # after the build: -mod=mod may have completed go.mod/go.sum
  say "$name: built in $((SECONDS - t0))s -> $out/$name"
  flock -u 9
}

# gateway-crds: the standard channel's CRDs of the pinned Gateway API module (config/crd/standard/), in
# $out/crds/standard/ (the module cache is read-only: copied, made writable).
crds() {
  local stamp
  stamp="$(stamp_of gateway-api)"
  exec 9>"$out/.lock-gateway-crds"
  flock 9
  if [[ -d "$out/crds/standard" && "$(cat "$out/crds.stamp" 2>/dev/null)" == "$stamp" ]]; then
    say "gateway-crds: cached at $out/crds/standard"
    flock -u 9
    return
  fi
  local dir
  dir="$(cd "$here/go/gateway-api" && GOFLAGS="-mod=mod -buildvcs=false" go mod download sigs.k8s.io/gateway-api &&
    GOFLAGS="-mod=mod -buildvcs=false" go list -m -f '{{.Dir}}' sigs.k8s.io/gateway-api)"
  if [[ -z "$dir" || ! -d "$dir/config/crd/standard" ]]; then
    say "gateway-crds: sigs.k8s.io/gateway-api $GATEWAY_API_VERSION has no config/crd/standard (module dir: ${dir:-none})"
    exit 1
  fi
  rm -rf "$out/crds.tmp"
  mkdir -p "$out/crds.tmp/standard"
  cp "$dir"/config/crd/standard/*.yaml "$out/crds.tmp/standard/"
  chmod -R u+w "$out/crds.tmp"
  rm -rf "$out/crds"
  mv "$out/crds.tmp" "$out/crds"
  printf '%s\n' "$stamp" >"$out/crds.stamp"
  say "gateway-crds: $(ls "$out/crds/standard" | wc -l) files of sigs.k8s.io/gateway-api $GATEWAY_API_VERSION -> $out/crds/standard"
  flock -u 9
}

minor="${K8S_VERSION#v1.}"
minor="${minor%%.*}"
vpkg=k8s.io/component-base/version
k8s_ldflags="-X $vpkg.gitVersion=$K8S_VERSION -X $vpkg.gitMajor=1 -X $vpkg.gitMinor=$minor -X $vpkg.gitTreeState=clean -X $vpkg.buildDate=1970-01-01T00:00:00Z"
[[ ${#targets[@]} -eq 0 ]] && targets=(etcd kube-apiserver)
for t in "${targets[@]}"; do
  case $t in
    etcd) build etcd etcd . "" ;;
    kube-apiserver) build kube-apiserver kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver "$k8s_ldflags" ;;
    helm) # the chart tests' helm, stamped as helm's Makefile does: its version, and the Kubernetes
      # version `helm template` assumes (1.<client-go minor>) instead of the unstamped v1.20.
      helm_version="$(awk '$1 == "helm.sh/helm/v3" { print $2 }' "$here/go/helm/go.mod")"
      kube_minor="$(awk '$1 == "k8s.io/client-go" { split($2, v, "."); print v[2] }' "$here/go/helm/go.mod")"
      hv=helm.sh/helm/v3
      build helm helm $hv/cmd/helm "-X $hv/internal/version.version=$helm_version -X $hv/internal/version.gitTreeState=clean \
-X $hv/pkg/chartutil.k8sVersionMajor=1 -X $hv/pkg/chartutil.k8sVersionMinor=$kube_minor \
-X $hv/pkg/lint/rules.k8sVersionMajor=1 -X $hv/pkg/lint/rules.k8sVersionMinor=$kube_minor" ;;
    conformance.test) build "$t" gateway-api sigs.k8s.io/gateway-api/conformance "" test ;;
    echo-basic) build "$t" gateway-api sigs.k8s.io/gateway-api/conformance/echo-basic "" ;;
    coredns) build "$t" coredns github.com/coredns/coredns "" ;; # its Makefile's GitCommit stamp: unknown here
    gateway-crds) crds ;;
    kube*) build "$t" kube-node "k8s.io/kubernetes/cmd/$t" "$k8s_ldflags" ;; # the node's, same version and stamps
    *) build "$t" "$t" . "" ;; # the small programs of our own (standard library only)
  esac
done

if [[ $gateway_targets -gt 0 ]]; then
  say "${targets[*]} ready in $out (gateway-api $GATEWAY_API_VERSION) after $((SECONDS - started))s"
else
  say "${targets[*]} ready in $out (etcd $ETCD_VERSION, kubernetes $K8S_VERSION) after $((SECONDS - started))s"
fi
printf '%s\n' "$out"
