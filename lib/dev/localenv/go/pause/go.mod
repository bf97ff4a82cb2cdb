// The node's pod sandbox process (the pause image); built by lib/dev/localenv/build.sh.
module ingress-controller.local/testenv/pause

go 1.24.0
