#!/usr/bin/env bash
# Install jbgui's desktop entry and icon for the current user (freedesktop locations), so that
# the explorer appears in the desktop's application menu. Needs `jbgui` on PATH (pip install).
#   packaging/install_desktop_entry.sh            install
#   packaging/install_desktop_entry.sh --remove   uninstall
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
data="${XDG_DATA_HOME:-$HOME/.local/share}"
apps="$data/applications"
icons="$data/icons/hicolor/scalable/apps"
if [ "${1:-}" = "--remove" ]; then
    rm -f "$apps/jbgui.desktop" "$icons/jbgui.svg"
    echo "removed jbgui's desktop entry from $apps"
    exit 0
fi
if ! command -v jbgui >/dev/null 2>&1; then
    echo "install_desktop_entry: jbgui is not on PATH; install it first (pip install .)" >&2
    exit 1
fi
mkdir -p "$apps" "$icons"
install -m 644 "$here/jbgui.desktop" "$apps/jbgui.desktop"
install -m 644 "$here/../jbgui/ui/icons/jbgui.svg" "$icons/jbgui.svg"
command -v update-desktop-database >/dev/null 2>&1 && update-desktop-database "$apps" || true
echo "installed $apps/jbgui.desktop and $icons/jbgui.svg"
