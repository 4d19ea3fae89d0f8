"""The application's look: the platform's palette (light or dark, as the desktop says), or a
dark Fusion palette on request."""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication


def apply_palette(app: QApplication, dark: bool = False) -> None:
    if not dark:
        return  # the desktop's own palette, light or dark
    app.setStyle("Fusion")
    pal = QPalette()
    base, window, text = QColor("#1e1f22"), QColor("#2b2d30"), QColor("#dfe1e5")
    for role, color in ((QPalette.ColorRole.Window, window), (QPalette.ColorRole.WindowText, text),
                        (QPalette.ColorRole.Base, base), (QPalette.ColorRole.AlternateBase, window),
                        (QPalette.ColorRole.Text, text), (QPalette.ColorRole.Button, window),
                        (QPalette.ColorRole.ButtonText, text), (QPalette.ColorRole.ToolTipBase, window),
                        (QPalette.ColorRole.ToolTipText, text), (QPalette.ColorRole.Highlight, QColor("#2f65ca")),
                        (QPalette.ColorRole.HighlightedText, QColor("#ffffff")),
                        (QPalette.ColorRole.Link, QColor("#6fa8ff")), (QPalette.ColorRole.PlaceholderText, QColor("#8c8f94"))):
        pal.setColor(role, color)
    app.setPalette(pal)
