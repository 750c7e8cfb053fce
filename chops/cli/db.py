"""placeholder: filled in by its issue."""
import click


@click.group()
def db() -> None:
    """Create, load and seed the database."""
