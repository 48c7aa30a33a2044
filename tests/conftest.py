"""Fixtures shared by several test files."""

from __future__ import annotations

import socket

import pytest


@pytest.fixture
def no_network(monkeypatch):
    """Fail any attempt to open a network connection (datasets must come from packages or the repo)."""

    def refuse(*args, **kwargs):
        raise AssertionError("a dataset tried to open a network connection")

    monkeypatch.setattr(socket, "socket", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
