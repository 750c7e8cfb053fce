"""placeholder: filled in by its issue."""
import click


@click.command()
def serve() -> None:
    """Run the web service (development server)."""
