"""placeholder: filled in by its issue."""
import click


@click.group()
def api() -> None:
    """List and call the operations."""
