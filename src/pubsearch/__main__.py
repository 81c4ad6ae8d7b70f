"""``python -m pubsearch``: the same as the ``pubsearch`` command."""

from pubsearch.cli.main import main

if __name__ == "__main__":
    main()
