"""Controller: matches, the robot turn, safety, the match log and the command line."""
