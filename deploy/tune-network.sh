#!/usr/bin/env bash
# Tunes a Jetson for GigE Vision cameras on INTERFACE: jumbo frames (MTU 9000) and socket receive
# buffers large enough for a 5 MP camera at 24 fps (about 120 MB/s); then prints advice on the
# reverse-path filter and interrupt affinity. Idempotent: a setting is changed only when it differs.
#
#   deploy/tune-network.sh [--dry-run] [--persist] INTERFACE
#
# --dry-run  print what would change, change nothing (no root needed)
# --persist  also write the sysctl values to /etc/sysctl.d/60-polarpipe-gige.conf
set -euo pipefail

mtu=9000
buffer=$((32 * 1024 * 1024))  # 32 MiB: several frames in flight while the receive thread catches up
sysctl_file=/etc/sysctl.d/60-polarpipe-gige.conf

dry_run=0
persist=0
interface=""
for arg in "$@"; do
  case "$arg" in
    --dry-run) dry_run=1 ;;
    --persist) persist=1 ;;
    -h | --help)
      sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    -*)
      echo "tune-network: unknown option $arg (see --help)" >&2
      exit 2
      ;;
    *) interface=$arg ;;
  esac
done
if [[ -z "$interface" ]]; then
  echo "tune-network: name the camera interface, e.g. eth0 (see --help)" >&2
  exit 2
fi
if [[ ! -e "/sys/class/net/$interface" ]]; then
  echo "tune-network: no network interface '$interface' (have: $(cd /sys/class/net && echo *))" >&2
  exit 2
fi
if [[ $dry_run -eq 0 && $(id -u) -ne 0 ]]; then
  echo "tune-network: changing the network needs root; run with sudo, or --dry-run to see the plan" >&2
  exit 2
fi

changes=0
apply() {  # description, command...
  local what=$1
  shift
  changes=$((changes + 1))
  if [[ $dry_run -eq 1 ]]; then
    echo "would: $what ($*)"
  else
    echo "setting: $what"
    "$@"
  fi
}

current_mtu=$(cat "/sys/class/net/$interface/mtu")
if [[ "$current_mtu" != "$mtu" ]]; then
  apply "MTU of $interface from $current_mtu to $mtu" ip link set dev "$interface" mtu "$mtu"
fi

for key in net.core.rmem_max net.core.rmem_default; do
  current=$(sysctl -n "$key")
  if [[ "$current" -lt "$buffer" ]]; then
    apply "$key from $current to $buffer" sysctl -q -w "$key=$buffer"
  fi
done

if [[ $persist -eq 1 ]]; then
  wanted=$(printf 'net.core.rmem_max = %s\nnet.core.rmem_default = %s\n' "$buffer" "$buffer")
  if [[ ! -f "$sysctl_file" || "$(cat "$sysctl_file")" != "$wanted" ]]; then
    apply "write $sysctl_file" bash -c "printf '%s\n' \"\$1\" > \"\$2\"" _ "$wanted" "$sysctl_file"
  fi
fi

echo "tune-network: $changes change(s) $([[ $dry_run -eq 1 ]] && echo planned || echo made) on $interface"

# Advice that depends on the site, printed rather than applied.
rp=$(sysctl -n "net.ipv4.conf.$interface.rp_filter" 2>/dev/null || echo "?")
echo "note: rp_filter on $interface is $rp. With the camera on its own subnet and one route to it, 1 (strict) works;"
echo "      if the camera answers from an address the routes do not lead back to, set 2 (loose):"
echo "      sysctl -w net.ipv4.conf.$interface.rp_filter=2"
irqs=$(awk -v dev="$interface" '$0 ~ dev { sub(":", "", $1); print $1 }' /proc/interrupts | tr '\n' ' ')
if [[ -n "$irqs" ]]; then
  echo "note: interrupts of $interface: $irqs. Pin them to one core (echo CORE > /proc/irq/N/smp_affinity_list)"
  echo "      and keep the pipeline's receive thread on another; stop irqbalance if it moves them back."
else
  echo "note: no interrupt line named after $interface in /proc/interrupts; see the NIC driver's IRQ names."
fi
echo "note: MTU changes made here last until reboot; make them permanent in the interface's network configuration."
