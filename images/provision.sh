#!/usr/bin/env bash
# Provisions the capa-rs node image (run by packer as root, see capa-ami.json): containerd
# and runc at pinned versions, kubelet, kubeadm and kubectl at KUBERNETES_VERSION from the
# Kubernetes package repository, and the kernel and system settings kubeadm's preflight
# checks need. Ends by resetting cloud-init so the image boots as new.
set -euo pipefail

: "${KUBERNETES_VERSION:?}" "${KUBERNETES_SERIES:?}" "${KUBERNETES_DEB_VERSION:?}"
: "${CONTAINERD_VERSION:?}" "${RUNC_VERSION:?}" "${CRICTL_VERSION:?}"
export DEBIAN_FRONTEND=noninteractive
ARCH="$(dpkg --print-architecture)"

# Wait for cloud-init's own first boot to finish before touching apt.
cloud-init status --wait || true

apt-get update
apt-get install -y --no-install-recommends \
  apt-transport-https ca-certificates curl gpg conntrack socat ebtables ethtool \
  ipset ipvsadm jq nfs-common chrony

# Kernel modules and sysctls kubeadm's preflight checks.
cat > /etc/modules-load.d/kubernetes.conf <<'CONF'
overlay
br_netfilter
CONF
modprobe overlay
modprobe br_netfilter
cat > /etc/sysctl.d/99-kubernetes.conf <<'CONF'
net.bridge.bridge-nf-call-iptables  = 1
net.bridge.bridge-nf-call-ip6tables = 1
net.ipv4.ip_forward                 = 1
CONF
sysctl --system

# No swap: the kubelet refuses it by default.
swapoff -a
sed -i '/\sswap\s/d' /etc/fstab

# containerd, runc and the CNI-independent tools, pinned.
curl -fsSL "https://github.com/containerd/containerd/releases/download/v${CONTAINERD_VERSION}/containerd-${CONTAINERD_VERSION}-linux-${ARCH}.tar.gz" \
  | tar -xz -C /usr/local
curl -fsSL -o /etc/systemd/system/containerd.service \
  "https://raw.githubusercontent.com/containerd/containerd/v${CONTAINERD_VERSION}/containerd.service"
curl -fsSL -o /usr/local/sbin/runc \
  "https://github.com/opencontainers/runc/releases/download/v${RUNC_VERSION}/runc.${ARCH}"
chmod 0755 /usr/local/sbin/runc
mkdir -p /etc/containerd
/usr/local/bin/containerd config default > /etc/containerd/config.toml
# The kubelet uses the systemd cgroup driver; containerd must match.
sed -i 's/SystemdCgroup = false/SystemdCgroup = true/' /etc/containerd/config.toml
systemctl daemon-reload
systemctl enable --now containerd

curl -fsSL "https://github.com/kubernetes-sigs/cri-tools/releases/download/${CRICTL_VERSION}/crictl-${CRICTL_VERSION}-linux-${ARCH}.tar.gz" \
  | tar -xz -C /usr/local/bin
cat > /etc/crictl.yaml <<'CONF'
runtime-endpoint: unix:///var/run/containerd/containerd.sock
image-endpoint: unix:///var/run/containerd/containerd.sock
CONF

# kubelet, kubeadm, kubectl from the Kubernetes repository of the series, pinned and held.
mkdir -p /etc/apt/keyrings
curl -fsSL "https://pkgs.k8s.io/core:/stable:/${KUBERNETES_SERIES}/deb/Release.key" \
  | gpg --dearmor -o /etc/apt/keyrings/kubernetes-apt-keyring.gpg
echo "deb [signed-by=/etc/apt/keyrings/kubernetes-apt-keyring.gpg] https://pkgs.k8s.io/core:/stable:/${KUBERNETES_SERIES}/deb/ /" \
  > /etc/apt/sources.list.d/kubernetes.list
apt-get update
apt-get install -y \
  "kubelet=${KUBERNETES_DEB_VERSION}" "kubeadm=${KUBERNETES_DEB_VERSION}" "kubectl=${KUBERNETES_DEB_VERSION}"
apt-mark hold kubelet kubeadm kubectl
systemctl enable kubelet

# Pull the control-plane images now, so kubeadm init does not wait for them.
kubeadm config images pull --kubernetes-version "${KUBERNETES_VERSION}"

# Leave a clean image: no apt lists, logs, machine id or cloud-init state.
apt-get clean
rm -rf /var/lib/apt/lists/* /var/log/*.log /tmp/*
truncate -s 0 /etc/machine-id
cloud-init clean --logs
