"""A web page to play the model and see what it thinks (the ``[web]`` extra).

``alphagomoku-web`` serves it (:mod:`alphagomoku.web.cli`); :func:`create_app` builds the
Starlette app for tests and other servers. Modules: ``app`` (routes and WebSocket), ``session``
(one connection's game and search), ``messages`` (checking what the page sends), ``analysis``
(the watchable, stoppable search), ``models`` (weights and players), ``views`` (winning line,
forbidden points, win rates), ``notation`` (position strings), ``run_games`` (a run's self-play
games), ``static/`` (the page).
"""

__all__ = ["create_app"]


def create_app(*args, **kwargs):
    # Imported on use: starlette is an optional dependency.
    from alphagomoku.web.app import create_app as build

    return build(*args, **kwargs)
