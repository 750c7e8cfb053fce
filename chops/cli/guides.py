"""placeholder: filled in by its issue."""
import click


@click.group()
def index() -> None:
    """Build the guide indexes."""


@click.command()
def retrieve() -> None:
    """Print the guide chunks nearest a question."""
