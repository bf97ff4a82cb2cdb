#!/usr/bin/env bash
# Builds the test environment's binaries from their Go modules (pinned in lib/dev/localenv/go/*/go.mod)
# into a cache outside the repository, and reuses that cache afterwards. Prints the directory
# holding them as its last stdout line; progress goes to stderr.
#
#   lib/dev/localenv/build.sh                 kube-apiserver and etcd: build when missing, print the directory
#   lib/dev/localenv/build.sh echo pause …    the named binaries instead (see `known` below; `helm` is helm v3)
#   KUBEBUILDER_ASSETS=/dir …             (no names) use /dir/{kube-apiserver,etcd}, build nothing
#
# Nothing prebuilt is downloaded: only Go modules, through the machine's Go toolchain.
set -euo pipefail

K8S_VERSION=v1.34.4
ETCD_VERSION=v3.6.16

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
say() { printf '[testenv build] %s\n' "$*" >&2; }

known="etcd kube-apiserver kubelet kube-controller-manager kube-scheduler kube-proxy echo pause helm"
targets=("$@")
for t in "${targets[@]}"; do
  if [[ " $known " != *" $t "* ]]; then
    say "unknown binary $t (known: $known)"
    exit 2
  fi
done

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

out="${XDG_CACHE_HOME:-$HOME/.cache}/ingress-controller/testenv/$K8S_VERSION"
mkdir -p "$out"

# A stamp of the pinned module files: editing a go.mod rebuilds the binary it describes. Whole-line
# comments are left out, so editing a go.mod's explanation never forces a rebuild.
stamp_of() {
  { cat "$here/go/$1/go.mod" "$here/go/$1"/*.go "$here/go/$1/go.sum" 2>/dev/null || true; } |
    grep -Ev '^[[:space:]]*//' | sha256sum | cut -c1-16
}

started=$SECONDS

# build <name> <module dir> <package> <ldflags>
build() {
  local name=$1 dir=$2 pkg=$3 ldflags=$4
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
  say "$name: modules ready after $((SECONDS - t0))s; compiling $pkg (go build -v)"
  local tmp="$out/.$name.tmp.$$"
  # `go build -v` names each package as it compiles it (no spaces); anything else is a message.
  set +e
  (cd "$here/go/$dir" && CGO_ENABLED=0 GOFLAGS="-mod=mod -buildvcs=false" go build -v -trimpath -ldflags "-s -w $ldflags" -o "$tmp" "$pkg") 2>&1 |
    awk -v name="$name" '
      / / { print > "/dev/stderr"; next }
      { n++; if (n % 100 == 0) { printf "[testenv build] %s: %d packages compiled\n", name, n > "/dev/stderr" } }
      END { printf "[testenv build] %s: %d packages compiled in total\n", name, n > "/dev/stderr" }'
  local rc=${PIPESTATUS[0]}
  set -e
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
    kube*) build "$t" kube-node "k8s.io/kubernetes/cmd/$t" "$k8s_ldflags" ;; # the node's, same version and stamps
    *) build "$t" "$t" . "" ;; # the small programs of our own (standard library only)
  esac
done

say "${targets[*]} ready in $out (etcd $ETCD_VERSION, kubernetes $K8S_VERSION) after $((SECONDS - started))s"
printf '%s\n' "$out"
