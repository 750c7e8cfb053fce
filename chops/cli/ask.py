"""placeholder: filled in by its issue."""
import click


@click.command()
def ask() -> None:
    """Ask the agent one question as a user."""
