// The end-to-end tests' backend (image ingress-controller-test/echo:dev); built by lib/dev/localenv/build.sh.
module ingress-controller.local/testenv/echo

go 1.24.0
